package overlay

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Trait is one locked persona trait the profile publishes (policy.box.persona.locked): its id,
// the skill blocks that define it and the phrases that state it. The runtime enforces the whole
// list whatever an overlay's own lock_check says: lock_check is intent, not authority.
type Trait struct {
	ID      string   `json:"id"`
	Blocks  []string `json:"blocks,omitempty"`
	Phrases []string `json:"phrases,omitempty"`
}

// A Violation is why an overlay touches a locked trait.
type Violation struct {
	Trait string
	// Rule names the lock rule: "replaces-locked-block", "removes-locked-phrase",
	// "negates-locked-phrase" or "modifies-locked-trait".
	Rule   string
	Detail string
}

// String renders the violation for an audit line: rule, trait, detail.
func (v Violation) String() string {
	return fmt.Sprintf("%s: trait %q: %s", v.Rule, v.Trait, v.Detail)
}

// negation cues a sentence uses to deny or drop what it names; modifying cues a sentence uses to
// change a trait. Matching is on whole words, case-insensitive, after folding punctuation.
var (
	negation  = words("not", "never", "no", "don't", "dont", "doesn't", "isn't", "aren't", "stop", "cease", "without", "avoid", "ignore", "disregard", "drop", "forget", "instead", "irrelevant", "unnecessary", "optional", "nor", "neither", "skip", "remove", "omit", "abandon", "suspend", "less", "fewer", "anymore", "longer")
	modifying = words("ignore", "disregard", "drop", "forget", "override", "overrule", "suspend", "relax", "reduce", "lower", "lessen", "less", "minimize", "soften", "disable", "abandon", "skip", "irrelevant", "unnecessary", "optional", "replace", "modify", "redefine", "without", "waive", "bypass", "pretend", "aside", "downplay", "deprioritize", "sacrifice", "unimportant", "secondary")
)

func words(ws ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range ws {
		m[w] = true
	}
	return m
}

var sentenceEnd = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[.!?;]+(\s|$)|\n\s*\n|\n\s*[-*+]\s|\n#`) })

// sentences splits text into sentences, joining the lines of a paragraph, so a phrase broken
// across lines is still one sentence.
func sentences(text string) []string {
	var out []string
	for _, s := range sentenceEnd().Split(text, -1) {
		s = strings.Join(strings.Fields(s), " ")
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// norm lowercases and folds everything but letters and digits to single spaces, so "Voice-
// Register", "voice register" and "voice_register" compare equal.
func norm(s string) string {
	var b strings.Builder
	space := true
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '\'' || r > 127 {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}

// containsWords reports whether normalized text holds normalized phrase on word boundaries.
func containsWords(text, phrase string) bool {
	if phrase == "" {
		return false
	}
	return strings.Contains(" "+text+" ", " "+phrase+" ")
}

// MentionsPhrase reports whether text holds phrase on word boundaries, compared as the lock
// linter compares them (case, punctuation and hyphens folded).
func MentionsPhrase(text, phrase string) bool { return containsWords(norm(text), norm(phrase)) }

func hasCue(text string, cues map[string]bool) string {
	for _, w := range strings.Fields(text) {
		if cues[w] {
			return w
		}
	}
	return ""
}

// CheckLock runs the persona-lock linter on an overlay about to be woven into skill: the locked
// traits the overlay would touch, whatever its lock_check declares. The rules:
//
//   - replaces-locked-block: a block-replacement of a block a trait names;
//   - removes-locked-phrase: a block-replacement whose block holds a locked phrase its new text
//     drops;
//   - negates-locked-phrase: a sentence of the overlay holding a locked phrase and a negation cue;
//   - modifies-locked-trait: a sentence naming a trait (its id, hyphens read as spaces) with a
//     modifying cue.
func CheckLock(o *Overlay, skill string, traits []Trait) []Violation {
	var out []Violation
	body := o.Body
	if o.Kind.Value == "block-replacement" {
		for _, t := range traits {
			for _, b := range t.Blocks {
				if b == o.Block.Value {
					out = append(out, Violation{t.ID, "replaces-locked-block", fmt.Sprintf("it replaces block %q", b)})
				}
			}
			if old, ok := FindBlock(skill, o.Block.Value); ok {
				for _, p := range t.Phrases {
					if containsWords(norm(old), norm(p)) && !containsWords(norm(body), norm(p)) {
						out = append(out, Violation{t.ID, "removes-locked-phrase", fmt.Sprintf("block %q holds %q and the replacement drops it", o.Block.Value, p)})
					}
				}
			}
		}
	}
	for _, s := range sentences(body) {
		ns := norm(s)
		for _, t := range traits {
			for _, p := range t.Phrases {
				if containsWords(ns, norm(p)) {
					if cue := hasCue(ns, negation); cue != "" {
						out = append(out, Violation{t.ID, "negates-locked-phrase", fmt.Sprintf("%q next to %q in %q", p, cue, s)})
					}
				}
			}
			if containsWords(ns, norm(t.ID)) {
				if cue := hasCue(ns, modifying); cue != "" {
					out = append(out, Violation{t.ID, "modifies-locked-trait", fmt.Sprintf("%q names it with %q", s, cue)})
				}
			}
		}
	}
	return out
}
