package fastyaml

import (
	"bytes"
	"fmt"
	"testing"

	"gopkg.in/yaml.v3"
)

// profile generates a profile with the given number of actors, shaped like real ones.
func profile(actors int) []byte {
	var b bytes.Buffer
	b.WriteString("schema: autonomy.ir.v1\ntargets: [gh-actions, local]\nactors:\n")
	for i := range actors {
		fmt.Fprintf(&b, "  actor-%d:\n    behavior: skills/worker\n    capabilities: [tasks:author, tasks:converse, agent:list]\n    timeout: 30\n    execution: { workspace: isolated }\n    triggers:\n      - cron: \"%d 6 * * 1-5\"\n        params: { KIND: trigger.kind }\n      - dispatch: true\n        params: { ISSUE: subject.ref, WHO: subject.actor, TEXT: subject.text }\n      - event: issue_comment\n        config:\n          types: [created, edited]\n        params:\n          ISSUE: subject.ref\n          ROLE: subject.actorRole\n          BODY: subject.text\n          KIND: trigger.kind\n    # a comment line to pad this actor a little, like real profiles have prose notes here.......\n", i, i%60)
	}
	return b.Bytes()
}

func BenchmarkParse(b *testing.B) {
	in := profile(10000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Parse(in); !ok {
			b.Fatal("Parse bailed out")
		}
	}
}

func BenchmarkYAMLv3(b *testing.B) {
	in := profile(10000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var n yaml.Node
		if err := yaml.Unmarshal(in, &n); err != nil {
			b.Fatal(err)
		}
	}
}
