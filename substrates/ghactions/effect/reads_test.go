package effect

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/tools"
)

func TestReadsAnswerTheReadTools(t *testing.T) {
	w, e := applyWorld(t)
	if _, err := w.fake.AddComment(w.item, "ada", "Please add a --json flag. "+strings.Repeat("é", ghwrite.MaxReadText)); err != nil {
		t.Fatal(err)
	}
	r := Reads{Env: e, Installed: goldenInstalled(t), Actor: "pm", Params: map[string]string{"ISSUE": "1"}}
	ctx := context.Background()
	got, err := r.Read(ctx, tools.ReadItem, &tools.ItemRef{Item: strconv.Itoa(w.item)})
	if err != nil {
		t.Fatal(err)
	}
	it := got.(*Item)
	if it.Title != "add a feature" || len(it.Comments) != 1 || it.Comments[0].Author != "ada" || !it.Truncated ||
		!strings.HasPrefix(it.Comments[0].Body, "Please add") || len(it.Comments[0].Body) > ghwrite.MaxReadText {
		t.Errorf("read_item = %+v", it)
	}
	if _, err := r.Read(ctx, tools.ReadItem, &tools.ItemRef{Item: "abc"}); err == nil {
		t.Error("read_item of a non-number")
	}
	if _, err := e.Apply(ctx, ApplyOptions{Installed: r.Installed, Actor: "pm", Session: "7", Outputs: outputs(t, "7",
		`{"tool":"set_state","actor":"pm","input":{"item":"`+strconv.Itoa(w.item)+`","state":"in-review"}}`)}); err != nil {
		t.Fatal(err)
	}
	list, err := r.Read(ctx, tools.ListItems, &tools.StateQuery{State: "in-review"})
	if err != nil {
		t.Fatal(err)
	}
	if items := list.([]Item); len(items) != 1 || items[0].Item != strconv.Itoa(w.item) || items[0].Labels[0] != "review-me" {
		t.Errorf("list_items in-review = %+v (the profile names the state review-me)", items)
	}
	info, err := r.Read(ctx, tools.SessionInfo, &tools.Empty{})
	if err != nil || !strings.Contains(strings.Join(info.(map[string]any)["capabilities"].([]string), " "), "agent:launch") {
		t.Errorf("session_info = %v %v", info, err)
	}
}
