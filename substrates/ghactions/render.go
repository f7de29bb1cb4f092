package ghactions

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// unrendered is a workflow built for c.files[file], whose body is not rendered yet.
type unrendered struct {
	file int
	wf   mapping
}

// renderWorkflows renders the workflows built (addWorkflow) into their files' bodies, on every
// CPU: rendering is most of a large fleet's compile, and each workflow's text depends on its
// mapping alone, never on which emitter renders it or in what order, so the bytes are the same
// however the work is shared (TestRenderIsTheSameOnAnyNumberOfCPUs). Every workflow is built
// first: a shared subtree is read-only once built (emitter.share), and nothing changes a
// workflow's mapping once it is recorded.
func (c *compiler) renderWorkflows() {
	todo := c.unrendered
	c.unrendered = nil
	workers := min(runtime.GOMAXPROCS(0), len(todo)/workflowsPerCPU)
	if workers <= 1 {
		for _, u := range todo {
			c.files[u.file].SetBody(c.emit.document(u.wf))
		}
		return
	}
	// One emitter each, each knowing what the compile shares: c.emit's own caches are not
	// safe to share. The first keeps c.emit.
	emitters := make([]*emitter, workers)
	emitters[0] = &c.emit
	for k := 1; k < workers; k++ {
		emitters[k] = c.emit.fork()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, e := range emitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(todo) {
					return
				}
				c.files[todo[i].file].SetBody(e.document(todo[i].wf))
			}
		}()
	}
	wg.Wait()
}

// workflowsPerCPU is the fewest workflows worth another goroutine.
const workflowsPerCPU = 32

// fork is a new emitter that shares what e shares (emitter.share), with none of e's texts: an
// emitter for another goroutine.
func (e *emitter) fork() *emitter {
	f := &emitter{noReuse: e.noReuse}
	if e.sharedMaps != nil {
		f.sharedMaps = make(map[*kv]*renders, len(e.sharedMaps))
		for k, r := range e.sharedMaps {
			f.sharedMaps[k] = &renders{n: r.n}
		}
	}
	if e.sharedSeqs != nil {
		f.sharedSeqs = make(map[*any]*renders, len(e.sharedSeqs))
		for k, r := range e.sharedSeqs {
			f.sharedSeqs[k] = &renders{n: r.n}
		}
	}
	return f
}
