package ghwrite

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"
)

// Bounds on what a read returns to the model.
const (
	MaxReadComments = 50
	MaxReadText     = 16 << 10
	MaxListed       = 100
)

// cutNote is what an item's answer says when a read was cut to the bounds.
var cutNote = fmt.Sprintf("cut: the body and each comment at most %d bytes, the last %d comments", MaxReadText, MaxReadComments)

// Item is a work item as read_item (and, without body and comments, list_items) returns it.
type Item struct {
	Item     string   `json:"item"`
	Title    string   `json:"title"`
	Body     string   `json:"body,omitempty"`
	State    string   `json:"state"`
	Labels   []string `json:"labels"`
	Comments []Note   `json:"comments,omitempty"`
	// Truncated is set when the body, a comment or the list of comments was cut; Cut says how.
	Truncated bool   `json:"truncated,omitempty"`
	Cut       string `json:"cut,omitempty"`
}

// Note is one comment of an item.
type Note struct {
	Author string `json:"author"`
	Body   string `json:"body"`
}

// ReadItem reads work item ref (title, body, state, labels and its last comments), bounded.
func (r Repo) ReadItem(ctx context.Context, ref string) (*Item, error) {
	n, err := Number("item", ref)
	if err != nil {
		return nil, err
	}
	is, _, err := r.Client.Issues.Get(ctx, r.Owner, r.Name, n)
	if err != nil {
		return nil, err
	}
	it := &Item{Item: ref, Title: is.GetTitle(), State: is.GetState(), Labels: labels(is)}
	it.Body, it.Truncated = cut(is.GetBody())
	cs, _, err := r.Client.Issues.ListComments(ctx, r.Owner, r.Name, n, &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}})
	if err != nil {
		return nil, err
	}
	if len(cs) > MaxReadComments {
		cs, it.Truncated = cs[len(cs)-MaxReadComments:], true
	}
	for _, c := range cs {
		body, cutOff := cut(c.GetBody())
		it.Truncated = it.Truncated || cutOff
		it.Comments = append(it.Comments, Note{Author: c.GetUser().GetLogin(), Body: body})
	}
	if it.Truncated {
		it.Cut = cutNote
	}
	return it, nil
}

// ListItems lists up to MaxListed items carrying a lifecycle state's label (r.Label): open
// ones, closed ones for done and rejected.
func (r Repo) ListItems(ctx context.Context, state string) ([]Item, error) {
	opts := &github.IssueListByRepoOptions{Labels: []string{r.Label(state)}, State: "open", ListOptions: github.ListOptions{PerPage: MaxListed}}
	if state == "done" || state == "rejected" {
		opts.State = "closed"
	}
	list, _, err := r.Client.Issues.ListByRepo(ctx, r.Owner, r.Name, opts)
	if err != nil {
		return nil, err
	}
	out := []Item{}
	for _, is := range list {
		out = append(out, Item{Item: fmt.Sprint(is.GetNumber()), Title: is.GetTitle(), State: is.GetState(), Labels: labels(is)})
	}
	return out, nil
}

func labels(is *github.Issue) []string {
	out := []string{}
	for _, l := range is.Labels {
		out = append(out, l.GetName())
	}
	return out
}

// cut bounds a text the model reads.
func cut(s string) (string, bool) {
	if len(s) <= MaxReadText {
		return s, false
	}
	i := MaxReadText
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}
