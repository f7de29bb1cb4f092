package ir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir/internal/fastyaml"
)

// MaxFileSize is the largest profile file Load reads. A real profile is a few kilobytes; the bound
// keeps a mistaken or hostile path from exhausting memory.
const MaxFileSize = 32 << 20

// ProfileFile is the file Load reads when given a profile directory.
const ProfileFile = "ir.yml"

// Load reads the profile at path: a profile directory holding ir.yml, or a profile file. The
// returned diagnostics are the structural problems of the file (YAML syntax, unknown keys, wrong
// types, duplicate keys); the profile holds everything that could be decoded despite them. The
// error is non-nil only when the file cannot be read at all (exit code 2, not a profile problem).
func Load(path string) (*Profile, Diagnostics, error) {
	file, dir, err := locate(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if info.Size() > MaxFileSize {
		r := &reporter{file: file}
		r.errorf(Pos{1, 1}, "split the profile or remove generated content", "file is %d bytes; the limit is %d (%s)", info.Size(), MaxFileSize, mib(MaxFileSize))
		return nil, r.diags, nil
	}
	// Read into a buffer of the size Stat gave, plus one byte to notice a file that grew since.
	data := make([]byte, 0, info.Size()+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if len(data) == cap(data) {
			if len(data) > MaxFileSize {
				break
			}
			data = append(data, 0)[:len(data)]
		}
	}
	if len(data) > MaxFileSize {
		r := &reporter{file: file}
		r.errorf(Pos{1, 1}, "split the profile or remove generated content", "file is over the %s limit", mib(MaxFileSize))
		return nil, r.diags, nil
	}
	p, diags := Parse(file, dir, data)
	return p, diags, nil
}

// Check loads the profile at path and validates it: every problem, sorted.
func Check(path string) (*Profile, Diagnostics, error) {
	p, diags, err := Load(path)
	if err != nil || p == nil {
		return p, diags, err
	}
	diags = append(diags, Validate(p)...)
	return p, diags.Sort(), nil
}

// nearbyProfile is the profile beside path that path is a plausible typo of (a directory holding
// a profile file, or a YAML file), as written with path's directory, or "". It reads at most the
// first 1,000 entries of that directory.
func nearbyProfile(path string) string {
	dir, base := filepath.Split(filepath.Clean(path))
	open := dir
	if open == "" {
		open = "."
	}
	d, err := os.Open(open)
	if err != nil {
		return ""
	}
	entries, _ := d.ReadDir(1000)
	d.Close()
	var names []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
			if _, err := os.Stat(filepath.Join(dir, name, ProfileFile)); err == nil {
				names = append(names, name)
			}
		case strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".yaml"):
			names = append(names, name)
		}
	}
	if near := nearest(base, names); near != "" {
		return dir + near
	}
	return ""
}

// locate resolves a profile path to its file and its directory.
// Locate is the file Load reads for path (path itself, or the ir.yml of the profile directory
// path names), or why there is none.
func Locate(path string) (file string, err error) {
	file, _, err = locate(path)
	return file, err
}

func locate(path string) (file, dir string, err error) {
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			hint := ""
			if near := nearbyProfile(path); near != "" {
				hint = fmt.Sprintf("did you mean %s? ", near)
			}
			return "", "", fmt.Errorf("%s: no such profile (%sgive a profile directory holding %s, or the file)", path, hint, ProfileFile)
		}
		return "", "", err
	}
	file, dir = path, filepath.Dir(path)
	if info.IsDir() {
		file, dir = filepath.Join(path, ProfileFile), path
		if info, err = os.Stat(file); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", "", fmt.Errorf("%s: not a profile directory: it has no %s%s", path, ProfileFile, profileNearby(path))
			}
			return "", "", err
		}
	}
	// A FIFO or a device would block the read or never end: only a regular file is a profile.
	if !info.Mode().IsRegular() {
		return "", "", fmt.Errorf("%s: not a regular file", file)
	}
	return file, dir, nil
}

// Parse decodes profile bytes. file names the file in diagnostics and dir is the profile directory
// relative paths resolve against (Validate reads it; Parse touches no file). The returned profile is
// nil only when the bytes hold no mapping at all.
func Parse(file, dir string, data []byte) (p *Profile, diags Diagnostics) {
	r := &reporter{file: file}
	defer func() {
		// The YAML library has panicked on malformed input in the past; a profile must never crash
		// the tool, so a panic becomes a diagnostic.
		if v := recover(); v != nil {
			p = nil
			r.errorf(Pos{1, 1}, "", "the YAML parser failed on this file: %v", v)
			diags = r.diags.Sort()
		}
	}()
	root := parseYAML(r, data)
	if root == nil {
		return nil, r.diags.Sort()
	}
	if !normalize(r, root) {
		return nil, r.diags.Sort()
	}
	p = decodeProfile(r, root)
	p.File, p.Dir = file, dir
	return p, r.diags.Sort()
}

var yamlErrLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// parseYAML parses one YAML document and returns its root node, or nil after reporting why not.
func parseYAML(r *reporter, data []byte) *yaml.Node {
	if len(bytes.TrimSpace(data)) == 0 {
		r.errorf(Pos{1, 1}, "start it with `schema: autonomy.ir.v1`", "the profile is empty")
		return nil
	}
	// The fast path covers the block-style YAML profiles are written in, several times faster than
	// yaml.v3 and with the same tree; anything else goes to yaml.v3, the authority.
	if doc, ok := fastyaml.Parse(data); ok {
		return rootOf(r, doc)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			r.errorf(Pos{1, 1}, "start it with `schema: autonomy.ir.v1`", "the profile holds only comments")
			return nil
		}
		reportYAMLError(r, data, err)
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		line := 1
		if err == nil && extra.Line > 0 {
			line = extra.Line
		}
		r.errorf(Pos{line, 1}, "a profile is a single YAML document; remove the `---` and what follows or split it into another profile", "more than one YAML document")
		return nil
	}
	return rootOf(r, &doc)
}

// rootOf returns the root mapping of a parsed document, or nil after reporting why there is none.
func rootOf(r *reporter, doc *yaml.Node) *yaml.Node {
	if len(doc.Content) == 0 || doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null" {
		r.errorf(Pos{1, 1}, "start it with `schema: autonomy.ir.v1`", "the profile holds only comments")
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		r.errorf(pos(root), "a profile is a mapping with keys such as schema, targets and actors", "the profile must be a mapping, not %s", describe(root))
		return nil
	}
	return root
}

// reportYAMLError turns a YAML library error into positioned diagnostics.
func reportYAMLError(r *reporter, data []byte, err error) {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		for _, e := range te.Errors {
			reportYAMLError(r, data, errors.New(e))
		}
		return
	}
	msg := err.Error()
	at := Pos{1, 1}
	if m := yamlErrLine().FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		msg = m[2]
		at = problemLine(data, line, err.Error())
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	if strings.Contains(msg, "UTF-8") || strings.Contains(msg, "UTF-16") {
		at = invalidUTF8(data, at)
	}
	if m := unknownAnchor().FindStringSubmatch(msg); m != nil {
		at = findText(data, "*"+m[1], at)
	}
	hint := ""
	if strings.Contains(msg, "control characters are not allowed") {
		// yaml.v3 names neither the character nor where it is.
		if off, c := nonPrintable(data); off >= 0 {
			at = offsetPos(data, off)
			msg = codePoint(c) + " is not allowed"
			hint = "remove it: YAML allows no control character but tab and line breaks, not even in a comment or a quoted string; inside double quotes write it as an escape such as \\x01"
		}
	} else if off, n := longKey(data); off >= 0 && offsetPos(data, off).Line <= at.Line {
		// yaml.v3 fails on an over-long key with a message about something else.
		at = offsetPos(data, off)
		msg = fmt.Sprintf("a key of %d characters is longer than YAML allows (%d)", n, maxPlainKey)
		hint = fmt.Sprintf("shorten it: an actor name has at most %d characters, a param name is an env name", MaxActorName)
	}
	if p, m, h, ok := notClosed(data, at, msg); ok && hint == "" {
		at, msg, hint = p, m, h
	} else if p, m, h, ok := colonInPlain(data, at, msg); ok && hint == "" {
		at, msg, hint = p, m, h
	}
	text := lineText(data, at.Line)
	if strings.Contains(msg, "found unexpected end of stream") {
		// A quoted string that never closes: point at its opening quote.
		if at.Col >= 1 && at.Col <= len(text) {
			if i := strings.IndexAny(text[at.Col-1:], `"'`); i >= 0 {
				at.Col += i
				hint = "the quoted string that starts here is never closed: close it, or remove the quote"
			}
		}
	}
	switch {
	case hint != "":
	case strings.Contains(text, "\t") && strings.Contains(msg, "cannot start any token"):
		hint = "indent with spaces: YAML does not allow tabs"
	case starValue().MatchString(text) && (strings.Contains(msg, "alias") || strings.Contains(msg, "alphabetic or numeric")):
		// The most common cause by far: an unquoted cron expression, which YAML reads as an alias.
		hint = "a value starting with * must be quoted, e.g. cron: \"*/15 * * * *\""
		at.Col = strings.Index(text, "*") + 1
	case strings.Contains(msg, "UTF-8") || strings.Contains(msg, "UTF-16"):
		hint = "save the file as UTF-8"
	default:
		hint = syntaxHint(msg)
	}
	r.errorf(at, hint, "YAML syntax error: %s", msg)
}

// starValue matches a line whose value starts with *: `key: *...` or `- *...`.
var starValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(-\s+|[^\s:#][^:#]*:\s+)\*`) })

var unknownAnchor = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^unknown anchor '(.*)' referenced$`) })

// maxRefine bounds the files whose syntax errors are located precisely: hand-written profiles.
const maxRefine = 256 << 10

// problemLine improves on the YAML library's error line, which names the start of the enclosing
// block rather than the offending line. The parser stops at the first error, so every prefix of
// the document that holds the offending line fails with the very same error, and no shorter prefix
// does (it parses, or fails differently, e.g. by cutting a quoted string in two): bisection over
// line prefixes finds that line.
func problemLine(data []byte, reported int, fullErr string) Pos {
	def := Pos{reported, 1}
	if len(data) > maxRefine {
		return def
	}
	var ends []int // ends[i] is the end of line i+1
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, len(data))
	}
	same := func(lines int) bool {
		var n yaml.Node
		err := yaml.Unmarshal(data[:ends[lines-1]], &n)
		return err != nil && err.Error() == fullErr
	}
	lo, hi := reported-1, len(ends) // invariant: !same(lo) (or lo == 0), same(hi)
	if lo < 0 || lo >= hi || !same(hi) {
		return def
	}
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; same(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	text := lineText(data, hi)
	return Pos{hi, len(text) - len(strings.TrimLeft(text, " ")) + 1}
}

// invalidUTF8 returns the position of the first byte that is not valid UTF-8, or def.
func invalidUTF8(data []byte, def Pos) Pos {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return offsetPos(data, i)
		}
		i += size
	}
	return def
}

// findText returns the position of the first occurrence of s in data, or def.
func findText(data []byte, s string, def Pos) Pos {
	i := bytes.Index(data, []byte(s))
	if i < 0 {
		return def
	}
	return offsetPos(data, i)
}

// offsetPos converts a byte offset of data to a line and column (counted in bytes).
func offsetPos(data []byte, i int) Pos {
	line := bytes.Count(data[:i], []byte("\n")) + 1
	return Pos{line, i - (bytes.LastIndexByte(data[:i], '\n') + 1) + 1}
}

// lineText returns line n (1-based) of data, or "".
func lineText(data []byte, n int) string {
	for i := 1; len(data) > 0; i++ {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			end = len(data)
		}
		if i == n {
			return string(data[:end])
		}
		if end == len(data) {
			break
		}
		data = data[end+1:]
	}
	return ""
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func pos(n *yaml.Node) Pos { return Pos{n.Line, n.Column} }

// profileNearby says where the profile a directory without one may have meant is: its profile
// under another extension, or the folder autonomy init writes (autonomy/); "" when neither.
func profileNearby(dir string) string {
	for _, name := range []string{"ir.yaml", "ir.YML", "IR.yml"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			if same, err := os.Stat(filepath.Join(dir, ProfileFile)); err == nil && os.SameFile(fi, same) {
				continue // a file system that ignores case
			}
			return fmt.Sprintf(" (it has %s: rename it %s)", name, ProfileFile)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "autonomy", ProfileFile)); err == nil && fi.Mode().IsRegular() {
		return fmt.Sprintf(" (autonomy init writes the profile into autonomy/: give %s)", filepath.Join(dir, "autonomy"))
	}
	return ""
}
