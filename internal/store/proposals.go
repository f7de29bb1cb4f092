package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A proposal is the local code flow's record of a change an agent proposes (its counterpart of
// a pull request): the branch a proposer's session left its commits on, the commit proposed
// (head), and where it stands. The runner creates one when a proposer's session ends done with
// commits on its branch; a tool call made from a session (a propose effect) may create one
// earlier with its own title and body (AddProposal), and the session's end then completes that
// one instead of making another: one proposal per session.
//
// States, in order: proposed (recorded, not yet checked), in-review (checked; its reviewer runs on
// head), approved (an approving verdict on head; waiting for a maintainer's act when it touches
// human-required paths), then merged, or refused (Reason says why: a check failed, the verdict was
// not an approval, or was for another head, the target moved, the maintainer declined).

// ProposalState is where a proposal stands.
type ProposalState string

// The proposal states.
const (
	ProposalProposed ProposalState = "proposed"
	ProposalInReview ProposalState = "in-review"
	ProposalApproved ProposalState = "approved"
	ProposalMerged   ProposalState = "merged"
	ProposalRefused  ProposalState = "refused"
)

// Proposal is one recorded proposal.
type Proposal struct {
	Seq int64 `json:"seq"`
	// Session is the proposer's session, Actor its actor.
	Session string `json:"session"`
	Actor   string `json:"actor"`
	// Branch holds the proposed commits; Target is the branch it merges into; Head the commit
	// proposed, the one a verdict must name.
	Branch string        `json:"branch"`
	Target string        `json:"target,omitempty"`
	Head   string        `json:"head,omitempty"`
	Title  string        `json:"title,omitempty"`
	Body   string        `json:"body,omitempty"`
	State  ProposalState `json:"state"`
	Reason string        `json:"reason,omitempty"`
	// Reviewer is the reviewer's session; Ask the maintainer's ask (human-required paths).
	Reviewer string `json:"reviewer,omitempty"`
	Ask      string `json:"ask,omitempty"`
	// Merged is the commit the target branch points at once it merged.
	Merged    string    `json:"merged,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// schemaV5 adds the proposals and the throttles.
const schemaV5 = `
CREATE TABLE proposals (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	session    TEXT NOT NULL UNIQUE,
	actor      TEXT NOT NULL,
	branch     TEXT NOT NULL DEFAULT '',
	target     TEXT NOT NULL DEFAULT '',
	head       TEXT NOT NULL DEFAULT '',
	title      TEXT NOT NULL DEFAULT '',
	body       TEXT NOT NULL DEFAULT '',
	state      TEXT NOT NULL CHECK (state IN ('proposed', 'in-review', 'approved', 'merged', 'refused')),
	reason     TEXT NOT NULL DEFAULT '',
	reviewer   TEXT NOT NULL DEFAULT '',
	ask        TEXT NOT NULL DEFAULT '',
	merged     TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX proposals_by_reviewer ON proposals (reviewer) WHERE reviewer <> '';
CREATE INDEX proposals_by_ask ON proposals (ask) WHERE ask <> '';
CREATE INDEX proposals_open ON proposals (state) WHERE state IN ('proposed', 'in-review', 'approved');

CREATE TABLE throttles (
	scope  TEXT PRIMARY KEY,
	reason TEXT NOT NULL DEFAULT '',
	by     TEXT NOT NULL DEFAULT '',
	at     INTEGER NOT NULL
) STRICT;
`

// addProposals is migration 5.
func addProposals(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, schemaV5)
	return err
}

const proposalCols = `seq, session, actor, branch, target, head, title, body, state, reason, reviewer, ask, merged, created_at, updated_at`

// AddProposal records p (state proposed unless set) as the proposal of its session, unless that
// session has one already; it returns the proposal recorded, and whether it is new.
func (st *Store) AddProposal(ctx context.Context, p Proposal) (Proposal, bool, error) {
	if p.Session == "" || p.Actor == "" {
		return Proposal{}, false, fmt.Errorf("a proposal needs its session and actor")
	}
	if p.State == "" {
		p.State = ProposalProposed
	}
	var created bool
	err := st.Tx(ctx, func(tx *Tx) error {
		at := nanos(now())
		res, err := tx.exec(`INSERT INTO proposals (session, actor, branch, target, head, title, body, state, reason, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session) DO NOTHING`,
			p.Session, p.Actor, p.Branch, p.Target, p.Head, p.Title, p.Body, string(p.State), p.Reason, at, at)
		if err != nil {
			return fmt.Errorf("recording the proposal of %s: %w", p.Session, err)
		}
		n, _ := res.RowsAffected()
		created = n > 0
		var ok bool
		p, ok, err = tx.proposalWhere(`session = ?`, p.Session)
		if err == nil && !ok {
			err = fmt.Errorf("the proposal of %s vanished", p.Session)
		}
		return err
	})
	return p, created, err
}

// ProposalOf returns the proposal of a proposer's session.
func (st *Store) ProposalOf(ctx context.Context, session string) (Proposal, bool, error) {
	return st.proposalWhere(ctx, `session = ?`, session)
}

// Proposal returns proposal seq as it is now.
func (st *Store) Proposal(ctx context.Context, seq int64) (Proposal, bool, error) {
	return st.proposalWhere(ctx, `seq = ?`, seq)
}

// ProposalReviewedBy returns the proposal whose reviewer is session rid.
func (st *Store) ProposalReviewedBy(ctx context.Context, rid string) (Proposal, bool, error) {
	return st.proposalWhere(ctx, `reviewer = ?`, rid)
}

// ProposalAwaiting returns the proposal waiting for the maintainer's ask session.
func (st *Store) ProposalAwaiting(ctx context.Context, ask string) (Proposal, bool, error) {
	return st.proposalWhere(ctx, `ask = ?`, ask)
}

// proposalWhere is a read, one statement: no write transaction (whose lock every other
// process's write waits for) for what a session's end asks, almost always in vain.
func (st *Store) proposalWhere(ctx context.Context, where string, arg any) (Proposal, bool, error) {
	return readProposal(st.db.QueryRowContext(ctx, `SELECT `+proposalCols+` FROM proposals WHERE `+where+` ORDER BY seq DESC LIMIT 1`, arg))
}

// ProposalsOfHead returns the proposals of commit head in state, newest first.
func (tx *Tx) ProposalsOfHead(head string, state ProposalState) ([]Proposal, error) {
	rows, err := tx.query(`SELECT `+proposalCols+` FROM proposals WHERE head = ? AND state = ? ORDER BY seq DESC`, head, state)
	if err != nil {
		return nil, fmt.Errorf("reading the proposals of %s: %w", head, err)
	}
	defer rows.Close()
	var ps []Proposal
	for rows.Next() {
		p, err := scanProposal(rows)
		if err != nil {
			return nil, fmt.Errorf("reading the proposals of %s: %w", head, err)
		}
		ps = append(ps, p)
	}
	return ps, rows.Err()
}

func (tx *Tx) proposalWhere(where string, arg any) (Proposal, bool, error) {
	return readProposal(tx.queryRow(`SELECT `+proposalCols+` FROM proposals WHERE `+where+` ORDER BY seq DESC LIMIT 1`, arg))
}

// readProposal scans the one proposal row, if any.
func readProposal(row *sql.Row) (Proposal, bool, error) {
	p, err := scanProposal(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Proposal{}, false, nil
	}
	if err != nil {
		return Proposal{}, false, fmt.Errorf("reading a proposal: %w", err)
	}
	return p, true, nil
}

// Proposals lists the proposals, newest first: the open ones only unless all, at most limit
// (0: no limit).
func (st *Store) Proposals(ctx context.Context, all bool, limit int) ([]Proposal, error) {
	q := `SELECT ` + proposalCols + ` FROM proposals`
	if !all {
		q += ` WHERE state IN ('proposed', 'in-review', 'approved')`
	}
	q += ` ORDER BY seq DESC`
	var args []any
	if limit > 0 {
		q, args = q+` LIMIT ?`, append(args, limit)
	}
	rows, err := st.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing the proposals: %w", err)
	}
	defer rows.Close()
	var out []Proposal
	for rows.Next() {
		p, err := scanProposal(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// MoveProposal applies fn to proposal seq in one transaction, only while its state is one of
// from (any when from is empty); it returns the proposal and whether it changed.
func (st *Store) MoveProposal(ctx context.Context, seq int64, from []ProposalState, fn func(*Proposal)) (Proposal, bool, error) {
	var p Proposal
	var changed bool
	err := st.Tx(ctx, func(tx *Tx) error {
		var ok bool
		var err error
		if p, ok, err = tx.proposalWhere(`seq = ?`, seq); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("no proposal %d", seq)
			}
			return err
		}
		if len(from) > 0 && !slices.Contains(from, p.State) {
			return nil
		}
		fn(&p)
		_, err = tx.exec(`UPDATE proposals SET branch = ?, target = ?, head = ?, title = ?, body = ?, state = ?, reason = ?,
			reviewer = ?, ask = ?, merged = ?, updated_at = ? WHERE seq = ?`,
			p.Branch, p.Target, p.Head, p.Title, p.Body, string(p.State), p.Reason, p.Reviewer, p.Ask, p.Merged, nanos(now()), seq)
		if err != nil {
			return fmt.Errorf("updating proposal %d: %w", seq, err)
		}
		changed = true
		return nil
	})
	return p, changed, err
}

func scanProposal(row scanner) (Proposal, error) {
	var p Proposal
	var state string
	var created, updated int64
	err := row.Scan(&p.Seq, &p.Session, &p.Actor, &p.Branch, &p.Target, &p.Head, &p.Title, &p.Body, &state, &p.Reason,
		&p.Reviewer, &p.Ask, &p.Merged, &created, &updated)
	p.State, p.CreatedAt, p.UpdatedAt = ProposalState(state), fromNanos(created), fromNanos(updated)
	return p, err
}

// String is where the proposal stands, as runner list and get show it.
func (p Proposal) String() string {
	s := string(p.State)
	if p.Reason != "" {
		s += ": " + p.Reason
	}
	return strings.TrimSpace(s)
}
