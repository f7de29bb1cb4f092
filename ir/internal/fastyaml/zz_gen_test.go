package fastyaml

import (
	"math/rand/v2"
	"testing"
)

func TestZZGen(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	taken := 0
	for i := range 20000 {
		in := randomDocument(r)
		ok, _ := compare([]byte(in))
		if ok {
			taken++
		}
		if i < 8 {
			t.Logf("ok=%v\n%s", ok, in)
		}
	}
	t.Logf("taken %d", taken)
}
