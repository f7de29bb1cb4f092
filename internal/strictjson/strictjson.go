// Package strictjson decodes an untrusted JSON document (a session's result, a reviewer's
// verdict, an effect's input) so that its consumer reads exactly what its validator checked.
//
// A validator reads a JSON object's keys exactly (a map), while encoding/json fills a Go struct
// matching keys case-insensitively, the last one winning: {"verdict":"comment",
// "Verdict":"approve"} satisfies a contract that allows only comment, yet decodes as approve.
// Check refuses, before any validator or consumer reads the document, every object, at any
// depth, with a key written twice or two keys equal under case folding; Unmarshal then fills a
// struct matching keys exactly, so a key the contract does not name is never read as one it does.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	k8sjson "sigs.k8s.io/json"

	"github.com/autonomyhq/autonomy/internal/jsonschema"
)

// KeyError is a key that repeats another of the same object, exactly or but for case.
type KeyError struct {
	// Key is the later key, First the earlier one it repeats; Line and Col (1-based) where Key is
	// written; Pointer the JSON pointer of the object holding both ("" for the top level).
	Key, First string
	Line, Col  int
	Pointer    string
}

func (e *KeyError) Error() string {
	where := e.Pointer
	if where == "" {
		where = "the top-level object"
	}
	how := "is written twice"
	if e.Key != e.First {
		how = fmt.Sprintf("differs from %q only in case", e.First)
	}
	return fmt.Sprintf("%d:%d: key %q in %s %s, and readers disagree on which one counts: %s", e.Line, e.Col, e.Key, where, how, e.Fix())
}

// Fix says how to write the document instead.
func (e *KeyError) Fix() string {
	return "write each key once, spelled exactly as the contract names it"
}

// Check refuses a document holding, in any object at any depth, a key written twice or two
// keys that differ only in case (a *KeyError naming the later one and where it is). Data that is
// not one JSON value is json.Unmarshal's error.
func Check(data []byte) error {
	if !json.Valid(data) {
		var v any
		return json.Unmarshal(data, &v) // the syntax error, with its offset
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a number is not parsed (1e400 is no float64 and needs none here)
	var stack []*frame
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.keys != nil && top.wantKey {
			if key, ok := tok.(string); ok {
				if err := top.add(key, data, before, stack); err != nil {
					return err
				}
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]string{}, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			stack[len(stack)-1].ended()
		}
	}
}

// ended moves past a value that ended: an object's next token is a key, an array's next
// element has the next index.
func (f *frame) ended() {
	if f.keys != nil {
		f.wantKey = true
	} else {
		f.index++
	}
}

// frame is an open object (keys: its keys so far by their folded spelling) or array.
type frame struct {
	keys    map[string]string
	wantKey bool
	key     string // the key of the value being read (an object's)
	index   int    // the index of the next element (an array's)
}

// add records key, written after offset before in data, in the object on top of stack.
func (f *frame) add(key string, data []byte, before int64, stack []*frame) error {
	f.wantKey, f.key = false, key
	folded := fold(key)
	if first, dup := f.keys[folded]; dup {
		line, col := position(data, keyStart(data, before))
		return &KeyError{Key: key, First: first, Line: line, Col: col, Pointer: pointer(stack[:len(stack)-1])}
	}
	f.keys[folded] = key
	return nil
}

// pointer is the JSON pointer of the value the innermost frame of stack is reading.
func pointer(stack []*frame) string {
	var b strings.Builder
	for _, f := range stack {
		b.WriteByte('/')
		if f.keys != nil {
			b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(f.key))
		} else {
			fmt.Fprint(&b, f.index)
		}
	}
	return b.String()
}

// fold is key with every rune replaced by the least rune of its case-folding orbit: two keys
// fold alike exactly when strings.EqualFold says they are equal, which covers encoding/json's
// matching (the Kelvin sign K folds with k).
func fold(key string) string {
	var b strings.Builder
	for _, r := range key {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// keyStart is the offset of the quote opening the key read after offset before.
func keyStart(data []byte, before int64) int {
	i := int(before)
	for i < len(data) && strings.IndexByte(" \t\r\n,", data[i]) >= 0 {
		i++
	}
	return i
}

// position is the 1-based line and column (in runes) of offset off in data.
func position(data []byte, off int) (int, int) {
	off = min(off, len(data))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(data[start:off])
}

// Decode is the document a validator checks, once Check passes: one JSON value, numbers kept
// exact (jsonschema.Decode).
func Decode(data []byte) (any, error) {
	doc, err := jsonschema.Decode(data)
	if err != nil {
		return nil, err
	}
	if err := Check(data); err != nil {
		return nil, err
	}
	return doc, nil
}

// Unmarshal fills v from data once Check passes, matching each struct field's key exactly (as a
// validator reads it): a key spelled otherwise is not that field's, and is left unread.
func Unmarshal(data []byte, v any) error {
	if err := Check(data); err != nil {
		return err
	}
	return k8sjson.UnmarshalCaseSensitivePreserveInts(data, v)
}
