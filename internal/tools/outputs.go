package tools

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/autonomyhq/autonomy/internal/strictjson"
)

// Bounds of a safe-output file: a model cannot make the trusted job read without end.
const (
	MaxOutputLine    = 256 << 10
	MaxOutputEffects = 500
)

// Outputs appends a session's effects to its safe-output file, one JSON line each. It is safe
// for concurrent use.
type Outputs struct {
	mu sync.Mutex
	f  *os.File
	n  int
}

// CreateOutputs opens (creating or appending to) the safe-output file at path.
func CreateOutputs(path string) (*Outputs, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &Outputs{f: f}, nil
}

// Append records one effect durably.
func (o *Outputs) Append(e Effect) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if len(line) >= MaxOutputLine {
		return fmt.Errorf("the %s call is %d bytes; at most %d", e.Tool, len(line), MaxOutputLine)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n >= MaxOutputEffects {
		return fmt.Errorf("this session already recorded %d effects, the most one session may", MaxOutputEffects)
	}
	if _, err := o.f.Write(append(line, '\n')); err != nil {
		return err
	}
	o.n++
	return o.f.Sync()
}

// Close closes the file.
func (o *Outputs) Close() error { return o.f.Close() }

// ReadOutputs reads a safe-output file: at most MaxOutputEffects lines of at most MaxOutputLine
// bytes, each one Effect. Anything else is an error naming the line.
func ReadOutputs(r io.Reader) ([]Effect, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []Effect
	for n := 1; ; n++ {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		if len(out) == MaxOutputEffects {
			return nil, fmt.Errorf("line %d: more than %d effects", n, MaxOutputEffects)
		}
		var e Effect
		if err := strictjson.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("line %d: not an effect: %v", n, err)
		}
		out = append(out, e)
	}
}

// readLine reads one line without its newline, refusing one longer than MaxOutputLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxOutputLine {
			return nil, fmt.Errorf("longer than %d bytes", MaxOutputLine)
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}
