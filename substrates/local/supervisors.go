package local

import "sync"

// supervisors is the set of sessions this process supervises: whether it supervises one (only
// then does a failed write of its end keep the outcome, outcome.go; and its supervisor is alive),
// and a wait for the ones it runs in goroutines (Options.Detach false) to end.
type supervisors struct {
	mu  sync.Mutex
	ids map[string]bool
	wg  sync.WaitGroup
}

// hold records that this process supervises session id.
func (v *supervisors) hold(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ids == nil {
		v.ids = map[string]bool{}
	}
	v.ids[id] = true
}

// release records that this process no longer supervises session id.
func (v *supervisors) release(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.ids, id)
}

// has says whether this process supervises session id.
func (v *supervisors) has(id string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ids[id]
}

// run runs supervise in a goroutine that wait waits for, releasing id when it returns.
func (v *supervisors) run(id string, supervise func()) {
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		defer v.release(id)
		supervise()
	}()
}

// wait waits for every supervision run started.
func (v *supervisors) wait() { v.wg.Wait() }
