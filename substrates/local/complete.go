package local

import (
	"context"
	"os"
	"strings"

	"github.com/autonomyhq/autonomy/internal/store"
)

// maxCompletions bounds the session ids a completion offers: the most recent ones.
const maxCompletions = 50

// CompleteActors lists the actors installed in dir whose names start with prefix, for shell
// completion: nothing when dir holds no installation.
func CompleteActors(dir, prefix string) []string {
	in, err := Open(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range in.Runner.Actors {
		if strings.HasPrefix(a, prefix) {
			out = append(out, a)
		}
	}
	return out
}

// CompleteSessions lists the ids of the sessions of the installation in dir that start with
// prefix, most recent first (at most 50), each as "ID\tACTOR STATUS" (the shell shows the part
// after the tab as its description). It reads an existing store only: completing never creates
// one.
func CompleteSessions(ctx context.Context, dir, prefix string) []string {
	if _, err := os.Stat(DBPath(dir)); err != nil {
		return nil
	}
	r, err := New(dir, Options{})
	if err != nil {
		return nil
	}
	defer r.Close()
	all, err := r.Store.List(ctx, store.ListOptions{All: true})
	if err != nil {
		return nil
	}
	var out []string
	for i := len(all) - 1; i >= 0 && len(out) < maxCompletions; i-- {
		s := all[i]
		if strings.HasPrefix(s.ID, prefix) {
			out = append(out, s.ID+"\t"+s.Actor+" "+string(s.Status))
		}
	}
	return out
}
