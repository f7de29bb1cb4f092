package substrates

import "github.com/autonomyhq/autonomy/ir"

// BoxDeclarer is implemented by a substrate that declares the JSON Schema of the policy.box
// section it owns (policy.box.<Name>); without it, the section is any mapping.
type BoxDeclarer interface {
	BoxSchema() map[string]any
}

// ShortNamer is implemented by a substrate that has plain other names (kubernetes's k8s):
// accepted wherever its name is, without the warning a deprecated alias (Aliases) gets.
type ShortNamer interface {
	ShortNames() []string
}

// ShortNames are s's plain other names, if it declares any.
func ShortNames(s Substrate) []string {
	if n, ok := s.(ShortNamer); ok {
		return n.ShortNames()
	}
	return nil
}

// Declaration is what s declares to the standard (ir): its name, aliases and policy.box section.
// The registry registers it with ir.RegisterTarget; ir knows no substrate by name.
func Declaration(s Substrate) ir.Target {
	t := ir.Target{Name: s.Name(), Aliases: s.Aliases(), Short: ShortNames(s)}
	if b, ok := s.(BoxDeclarer); ok {
		t.Box = b.BoxSchema()
	}
	return t
}
