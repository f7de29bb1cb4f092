package local

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/mergecheck"
	"github.com/autonomyhq/autonomy/internal/store"
)

// A reviewer's result may approve the code and ask that a person approve the change
// (ir.PersonKey: open-autonomy.review.v1's humanApprovalRequired). When the code flow settles
// such a verdict it records the ask, bound to the proposal's head; the approved proposal then
// merges (local-git), or is armed for GitHub's merge (codeHost github), only once the
// maintainer's ask covering all it lands is resolved done by the operator: the one ask that
// human-required paths engage (codeflow_merge.go), covering both. A later proposal is a new head
// with a verdict of its own, and no approval carries over to it.

func personKey(seq int64) string { return "proposal-person:" + strconv.FormatInt(seq, 10) }

// personAsk is a reviewer's ask for a person, recorded for the head it reviewed.
type personAsk struct {
	Head     string `json:"head"`
	Reviewer string `json:"reviewer"`
}

// askedForPerson records that reviewer asks that a person approve the proposal's head; false
// when it could not be recorded (the proposal then waits in review, saying why, and tick
// settles its verdict again).
func (f *flow) askedForPerson(ctx context.Context, reviewer string) bool {
	v, _ := json.Marshal(personAsk{Head: f.p.Head, Reviewer: reviewer})
	if err := f.r.Store.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(personKey(f.p.Seq), string(v)) }); err != nil {
		f.wait(ctx, "reviewed; its reviewer's ask for a person was not recorded (tick retries): "+err.Error())
		return false
	}
	return true
}

// personAsked is the reviewer that asked that a person approve the proposal's head ("" when
// none did).
func (f *flow) personAsked(ctx context.Context) (string, error) {
	var a personAsk
	err := f.r.Store.Tx(ctx, func(tx *store.Tx) error {
		v, ok, err := tx.Meta(personKey(f.p.Seq))
		if err == nil && ok && v != "" {
			err = json.Unmarshal([]byte(v), &a)
		}
		return err
	})
	if err != nil || a.Head == "" || !strings.EqualFold(a.Head, f.p.Head) {
		return "", err
	}
	return a.Reviewer, nil
}

// forPerson is touched, what a maintainer must approve of files (what the merge lands): with
// every file of it, and a line saying why, when the proposal's reviewer asked that a person
// approve it. False when that cannot be read: the proposal then waits, saying why.
func (f *flow) forPerson(ctx context.Context, files, touched []string) ([]string, bool) {
	who, err := f.personAsked(ctx)
	if err != nil {
		f.wait(ctx, "approved; not merged yet: its reviewer's ask for a person cannot be read (tick retries): "+err.Error())
		return nil, false
	}
	if who == "" {
		return touched, true
	}
	return append(mergecheck.Union(touched, files), fmt.Sprintf("all it lands (its reviewer %s asks that a person approve it)", who)), true
}
