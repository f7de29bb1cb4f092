package modelproxy

import (
	"context"
	"testing"
	"time"
)

// A body being checked takes its decoded cost of the proxy's budget: a small one is checked at
// once beside a large one (one check at a time held every request behind a body that took
// seconds), a second large one waits for the first, and a request that goes away stops waiting.
func TestBudgetLetsSmallChecksPass(t *testing.T) {
	b := newBudget(100)
	ctx := context.Background()
	if !b.acquire(ctx, 90) {
		t.Fatal("the first large part")
	}
	if !b.acquire(ctx, 10) { // does not wait: it fits
		t.Fatal("a small part beside it")
	}
	got := make(chan bool)
	go func() { got <- b.acquire(ctx, 60) }()
	select {
	case <-got:
		t.Fatal("a second large part was taken while the first is held")
	case <-time.After(50 * time.Millisecond):
	}
	b.release(10) // not enough for it
	select {
	case <-got:
		t.Fatal("a second large part was taken with 10 free")
	case <-time.After(50 * time.Millisecond):
	}
	b.release(90)
	if !<-got {
		t.Fatal("the second large part, once the first was given back")
	}
	gone, cancel := context.WithCancel(ctx)
	waited := make(chan bool)
	go func() { waited <- b.acquire(gone, 50) }()
	cancel()
	if <-waited {
		t.Error("a part was taken for a request that went away")
	}
	b.release(60)
	if !b.acquire(ctx, 100) {
		t.Error("the whole budget is not back")
	}
}
