package local

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"runtime"
	"sync"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// unencoded is a value whose indented JSON is c.files[file]'s Data, not encoded yet.
type unencoded struct {
	file int
	v    any
}

// jsonLater is json, the encoding left to encodeAll: an actor's config is most of a large
// fleet's local compile, and each encodes on its own.
func (c *compiler) jsonLater(path, producer string, pos ir.Pos, v any) {
	n := len(c.files)
	c.add(substrates.File{Path: path, Mode: 0o644, Header: substrates.JSONHeader}, producer, pos)
	if len(c.files) > n && !c.list {
		c.unencoded = append(c.unencoded, unencoded{file: n, v: v})
	}
}

// encodeAll encodes the values jsonLater left, on every CPU. Nothing changes them once recorded
// and each file's bytes are its value's alone, so they are the same however the work is shared.
func (c *compiler) encodeAll() {
	todo := c.unencoded
	c.unencoded = nil
	parts := min(runtime.GOMAXPROCS(0), len(todo)/valuesPerCPU)
	if parts <= 1 {
		parts = 1
	}
	var wg sync.WaitGroup
	for k := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, u := range todo[k*len(todo)/parts : (k+1)*len(todo)/parts] {
				c.files[u.file].Data = encodeJSON(u.v)
			}
		}()
	}
	wg.Wait()
}

// hashBehaviors records in each actor's config the sha256 of the behavior installed for it,
// which a session verifies before it runs it (Install.verifyBehavior). Actors of one role share
// a behavior: each is hashed once.
func (c *compiler) hashBehaviors() {
	if c.list {
		return
	}
	sums := map[string]string{}
	for _, cfg := range c.actors {
		sums[cfg.Behavior] = ""
	}
	for i := range c.files {
		if _, ok := sums[c.files[i].Path]; ok {
			sum := sha256.Sum256(c.files[i].Data)
			sums[c.files[i].Path] = hex.EncodeToString(sum[:])
		}
	}
	for _, cfg := range c.actors {
		cfg.BehaviorSHA256 = sums[cfg.Behavior]
	}
}

// valuesPerCPU is the fewest values worth another goroutine.
const valuesPerCPU = 64

// encodeJSON is v as indented JSON, HTML characters left as they are.
func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err) // only this package's own types and JSON-compatible schema values are encoded
	}
	return buf.Bytes()
}
