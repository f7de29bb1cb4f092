package substrates

import "github.com/autonomyhq/autonomy/ir"

// BoxDeclarer is implemented by a substrate that declares the JSON Schema of the policy.box
// section it owns (policy.box.<Name>); without it, the section is any mapping.
type BoxDeclarer interface {
	BoxSchema() map[string]any
}

// Declaration is what s declares to the standard (ir): its name, aliases and policy.box section.
// The registry registers it with ir.RegisterTarget; ir knows no substrate by name.
func Declaration(s Substrate) ir.Target {
	t := ir.Target{Name: s.Name(), Aliases: s.Aliases()}
	if b, ok := s.(BoxDeclarer); ok {
		t.Box = b.BoxSchema()
	}
	return t
}
