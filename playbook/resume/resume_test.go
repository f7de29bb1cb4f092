package resume

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
)

// memStore is an in-memory stepsrun.Store.
type memStore struct {
	mu     sync.Mutex
	pauses map[string][2]string // key → session, state
}

func newMem() *memStore { return &memStore{pauses: map[string][2]string{}} }

func (m *memStore) SavePause(_ context.Context, key, session string, state []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pauses[key] = [2]string{session, string(state)}
	return nil
}

func (m *memStore) TakePause(_ context.Context, key string) ([]byte, string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pauses[key]
	if !ok {
		return nil, "", false, nil
	}
	delete(m.pauses, key)
	return []byte(p[1]), p[0], true, nil
}

func (m *memStore) PutState(ctx context.Context, key, session string, state []byte) error {
	return m.SavePause(ctx, key, session, state)
}

func (m *memStore) GetState(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pauses[key]
	return []byte(p[1]), ok, nil
}

// TestResumeRefusesAStepAnswerToAWorkflow: --answer to a workflow's approval pause is refused
// with a token error, and the pause is put back for its --approve.
func TestResumeRefusesAStepAnswerToAWorkflow(t *testing.T) {
	st := newMem()
	key := playproto.HashToken("tok")
	if err := st.SavePause(context.Background(), key, "s1", []byte(`{"pipeline":"x"}`)); err != nil {
		t.Fatal(err)
	}
	got := Resume(context.Background(), st, Request{Token: "tok", Answer: stepsrun.Answer{Text: "yes"}})
	env, ok := got.(engine.Envelope)
	if !ok || env.Error == nil || env.Error.Kind != "token" {
		t.Fatalf("Resume = %#v, want a token error", got)
	}
	if p, ok := st.pauses[key]; !ok || p != [2]string{"s1", `{"pipeline":"x"}`} {
		t.Errorf("the workflow's pause was not put back: %v %v", p, ok)
	}
}

// TestResumeUnknownTokenIsTheEngines: an approval of a token no pause has is the workflow
// engine's refusal, and takes nothing from the store.
func TestResumeUnknownTokenIsTheEngines(t *testing.T) {
	st := newMem()
	_ = st.SavePause(context.Background(), playproto.HashToken("other"), "", []byte("{}"))
	got := Resume(context.Background(), st, Request{Token: "nope", Answer: stepsrun.Answer{Approve: true}})
	env, ok := got.(engine.Envelope)
	if !ok || env.OK || env.Error == nil {
		t.Fatalf("Resume = %#v, want the engine's refusal", got)
	}
	if len(st.pauses) != 1 {
		t.Errorf("the store lost a pause: %v", st.pauses)
	}
}

// TestRecorderExport: the pause a run ends waiting at is written to the pause file as JSON; a run
// that does not wait for input writes none.
func TestRecorderExport(t *testing.T) {
	rec := &Recorder{Store: newMem()}
	if err := rec.SavePause(context.Background(), "hash", "s1", []byte(`{"kind":"x"}`)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	done := filepath.Join(dir, "done.json")
	rec.Export(done, stepsrun.Envelope{Status: "ok"})
	if _, err := os.Stat(done); !os.IsNotExist(err) {
		t.Errorf("a finished run wrote a pause file: %v", err)
	}
	path := filepath.Join(dir, "pause.json")
	if env := rec.Export(path, stepsrun.Envelope{Status: stepsrun.StatusNeedsInput}); env.Error != nil {
		t.Fatal(env.Error)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p stepsrun.Pause
	if err := json.Unmarshal(data, &p); err != nil || p.TokenHash != "hash" || p.Session != "s1" || string(p.State) != `{"kind":"x"}` {
		t.Errorf("pause file %s: %+v %v", data, p, err)
	}
	if env := rec.Export(filepath.Join(dir, "no", "such", "dir", "p.json"), stepsrun.Envelope{Status: stepsrun.StatusNeedsInput}); env.Error == nil || env.Error.Kind != "internal" {
		t.Errorf("an unwritable pause file: %+v", env.Error)
	}
}
