package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// Words splits a command into words: it is workflow.Words, the parser validate uses too.
func Words(s string) ([]string, error) { return workflow.Words(s) }

// inline turns `cmd | cmd | approve "prompt" | cmd` into a workflow: steps s1, s2, … each
// reading the previous step's stdout; an `approve [PROMPT]` segment gates the next command.
func inline(p string) ([]byte, error) {
	if !utf8.ValidString(p) {
		return nil, fmt.Errorf("the pipeline is not UTF-8 text")
	}
	segs, err := splitPipes(p)
	if err != nil {
		return nil, err
	}
	type step struct {
		ID       string `json:"id"`
		Command  string `json:"command"`
		Stdin    string `json:"stdin,omitempty"`
		Approval string `json:"approval,omitempty"`
		Prompt   string `json:"prompt,omitempty"`
	}
	var steps []step
	gate, prompt := false, ""
	for _, seg := range segs {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			return nil, fmt.Errorf("the pipeline has an empty command (nothing between two |, or at an end)")
		}
		if seg == "approve" || strings.HasPrefix(seg, "approve ") {
			w, err := Words(strings.TrimPrefix(seg, "approve"))
			if err != nil {
				return nil, err
			}
			gate, prompt = true, strings.Join(w, " ")
			continue
		}
		st := step{ID: fmt.Sprintf("s%d", len(steps)+1), Command: seg}
		if len(steps) > 0 {
			st.Stdin = "$" + steps[len(steps)-1].ID + ".stdout"
		}
		if gate {
			st.Approval, st.Prompt = "required", prompt
			gate, prompt = false, ""
		}
		steps = append(steps, st)
	}
	if gate {
		return nil, fmt.Errorf("the pipeline ends with approve: an approval gates the command after it")
	}
	// JSON, which the workflow format reads as it reads YAML: every string is quoted, so no
	// command can be read back as something else (yaml.v3 writes the string "<<" plain, and
	// reads it back as a merge key).
	out, err := json.MarshalIndent(map[string]any{"name": "pipeline", "steps": steps}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(yamlSafe(out), '\n'), nil
}

// yamlSafe escapes, as JSON \u escapes, the characters a JSON string may hold raw but YAML
// refuses or reads as a line break: DEL, the C1 controls (NEL among them), the BOM and the
// non-characters U+FFFE and U+FFFF. JSON's own escapes already cover C0 and U+2028/U+2029.
func yamlSafe(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, r := range string(b) {
		if r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0xfeff || r == 0xfffe || r == 0xffff {
			out = fmt.Appendf(out, `\u%04x`, r)
			continue
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// splitPipes splits at | outside quotes.
func splitPipes(p string) ([]string, error) {
	var out []string
	start, q := 0, byte(0)
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case q != 0:
			if c == '\\' && q == '"' {
				i++
			} else if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '\\':
			i++
		case c == '|':
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	if q != 0 {
		return nil, fmt.Errorf("unterminated %c in the pipeline", q)
	}
	return append(out, p[start:]), nil
}
