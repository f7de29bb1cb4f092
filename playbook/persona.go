package playbook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
	"github.com/autonomyhq/autonomy/playbook/overlay"
)

// PersonaKey is the policy.box key holding the persona the runtime protects from overlays:
//
//	persona:
//	  locked:
//	    - id: warmth
//	      blocks: [tone]                       # skill blocks that define it
//	      phrases: ["answer warmly"]           # phrases that state it
//	  maxOverlays: 20                          # the cap of active overlays woven per actor
const PersonaKey = "persona"

// DefaultCap is the cap of active overlays woven for one actor when the persona sets none.
const DefaultCap = 20

// Persona is the profile's persona lock and overlay cap.
type Persona struct {
	Locked []overlay.Trait `json:"locked"`
	Cap    int             `json:"maxOverlays"`
}

var traitID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// ReadPersona reads policy.box.persona, reporting every problem at its position in the profile.
func ReadPersona(p *ir.Profile) (Persona, ir.Diagnostics) {
	out := Persona{Locked: []overlay.Trait{}, Cap: DefaultCap}
	const ex = "e.g. persona: { locked: [{ id: warmth, blocks: [tone], phrases: [answer warmly] }], maxOverlays: 20 }"
	diags := boxSection(p, PersonaKey, ex, func(k, v *yaml.Node, bad badFunc) {
		switch k.Value {
		case "locked":
			if v.Kind != yaml.SequenceNode {
				bad(v, ex, ".locked must be a list of traits")
				return
			}
			for _, item := range v.Content {
				if t, ok := trait(item, bad); ok {
					out.Locked = append(out.Locked, t)
				}
			}
		case "maxOverlays":
			c, err := strconv.Atoi(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil || c < 1 {
				bad(v, "a whole number ≥ 1", ".maxOverlays must be a positive integer, not %q", v.Value)
				return
			}
			out.Cap = c
		default:
			bad(k, ir.Suggest(k.Value, []string{"locked", "maxOverlays"}), ": unknown key %q", k.Value)
		}
	})
	return out, diags
}

func trait(n *yaml.Node, bad badFunc) (overlay.Trait, bool) {
	const ex = "e.g. { id: warmth, blocks: [tone], phrases: [answer warmly] }"
	if n.Kind != yaml.MappingNode {
		bad(n, ex, ".locked: a trait must be a mapping")
		return overlay.Trait{}, false
	}
	var t overlay.Trait
	idGiven := false
	strs := func(v *yaml.Node, what string) []string {
		if v.Kind != yaml.SequenceNode {
			bad(v, ex, ".locked: %s must be a list", what)
			return nil
		}
		var out []string
		for _, s := range v.Content {
			if s.Kind != yaml.ScalarNode || s.Value == "" {
				bad(s, ex, ".locked: an entry of %s must be a non-empty string", what)
				continue
			}
			out = append(out, s.Value)
		}
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "id":
			idGiven = true
			if v.Kind != yaml.ScalarNode || !traitID().MatchString(v.Value) {
				bad(v, "kebab-case, e.g. voice-register", ".locked: trait id %q is not kebab-case", v.Value)
				continue
			}
			t.ID = v.Value
		case "blocks":
			t.Blocks = strs(v, "blocks")
		case "phrases":
			t.Phrases = strs(v, "phrases")
		default:
			bad(k, ir.Suggest(k.Value, []string{"id", "blocks", "phrases"}), ".locked: unknown key %q", k.Value)
		}
	}
	if t.ID == "" {
		if !idGiven {
			bad(n, ex, ".locked: a trait has no id")
		}
		return overlay.Trait{}, false
	}
	return t, true
}

// WeaveFile is the file of an installation (in its data folder) telling the runtime what to
// weave at session start: the overlay package's folder and the persona.
const WeaveFile = "weave.json"

// WeaveConfig is the content of WeaveFile.
type WeaveConfig struct {
	// Package is the overlay package's folder, relative to the installation root.
	Package string `json:"package"`
	Persona
}

// WeaveInstall weaves the overlay package of the installation in dir (as its data folder's
// WeaveFile describes it) into skill for one session. ok is false when the installation has no
// overlay package: the skill is then returned unchanged. Overlays whose installed file no longer
// validates are not woven; overlays are named by their path in the installation.
func WeaveInstall(dir, dataDir string, actor overlay.Actor, skill string, now time.Time) (res overlay.Result, ok bool, err error) {
	cfgFile := filepath.Join(dir, filepath.FromSlash(dataDir), WeaveFile)
	data, err := source.ReadFile(cfgFile, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return overlay.Result{Skill: skill}, false, nil
	}
	if err != nil {
		return res, false, fmt.Errorf("cannot read the weaving config: %v", err)
	}
	var wc WeaveConfig
	if err := json.Unmarshal(data, &wc); err != nil || wc.Package == "" || strings.Contains(wc.Package, "..") || filepath.IsAbs(wc.Package) {
		return res, false, fmt.Errorf("%s is not a weaving config (compile again)", cfgFile)
	}
	pkg, diags, err := LoadPackage(filepath.Join(dir, filepath.FromSlash(wc.Package)))
	if err != nil {
		return res, false, fmt.Errorf("cannot read the overlay package: %v", err)
	}
	broken := map[string]bool{}
	for _, d := range diags {
		if d.Severity == ir.Error {
			broken[d.File] = true
		}
	}
	var overlays []*overlay.Overlay
	for _, o := range pkg.Overlays {
		if broken[o.File] {
			continue
		}
		if rel, err := filepath.Rel(dir, o.File); err == nil {
			o.File = filepath.ToSlash(rel)
		}
		overlays = append(overlays, o)
	}
	return overlay.Weave(overlays, overlay.Session{Actor: actor, Skill: skill, Locked: wc.Locked, Cap: wc.Cap, Now: now}), true, nil
}
