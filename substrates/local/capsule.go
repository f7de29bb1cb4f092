package local

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/strictjson"
	"github.com/autonomyhq/autonomy/ir"
)

// An agent whose behavior is a capsule playbook is held to the playbook's ## Verification
// method: its process exiting 0 (with a result that passes its contract, when it declares one)
// is the agent's own success, and the method decides what more the session needs to be done.
//
//   - self-attestation: nothing more.
//   - automated-check: the result must pass the actor's result contract (a contract is required:
//     validate refuses the method without one, and the runner fails a session without one).
//   - human-sign-off: the session parks input-required, and a person's `runner update ID --token
//     T --approve` makes it done (--deny: failed). The token is single use, shown in the log.
//   - peer-review: the session parks input-required and the runner launches the actor's review:
//     reviewer for it, with subject.ref session/ID and, in subject.text, the digest (sha256) of
//     the session's result file. The session is done only when that reviewer session (that one:
//     its id is bound to the wait) ends done with a result whose verdict is "approve" and whose
//     headSha is that digest; anything else fails it.
//
// cold-boot-test and external-audit are refused at validate time (playbook/verification.go).

// capsuleWait is what a parked capsule session waits for, saved as a pause of the session.
type capsuleWait struct {
	Kind     string `json:"kind"` // "sign-off" or "peer-review"
	Verified string `json:"verified"`
	// Reviewer and Digest bind a peer review: the reviewer session and the result it reviews.
	Reviewer string `json:"reviewer,omitempty"`
	Digest   string `json:"digest,omitempty"`
}

// reviewKey is the pause under which a proposer waits for reviewer session id.
func reviewKey(id string) string { return "review:" + id }

// holdToMethod ends (or parks) an agent session whose process exited 0, by its capsule's
// verification method; status, reason and verified are what the result check found.
func (pb *playbooks) holdToMethod(ctx context.Context, s store.Session, cfg *ActorConfig, resultPath string, log io.Writer,
	end func(ir.SessionStatus, string, string, *int), code *int, status ir.SessionStatus, reason, verified string) {
	method := cfg.Verification
	if method == "" {
		end(status, reason, verified, code)
		return
	}
	if status != ir.Done {
		end(status, underMethod(cfg, reason), "", code)
		return
	}
	switch method {
	case "self-attestation":
		end(ir.Done, "", verified+"; verification self-attestation: the agent's own success", code)
	case "automated-check":
		if cfg.Result == "" {
			end(ir.Failed, "verification automated-check: the actor declares no result contract, so nothing can check the result (add result: { schema: … } and compile again)", "", code)
			return
		}
		end(ir.Done, "", verified+"; verification automated-check: the result passed the actor's contract", code)
	case "human-sign-off":
		pb.parkSignOff(ctx, s, log, end, code, verified)
	case "peer-review":
		pb.parkReview(ctx, s, cfg, resultPath, log, end, code, verified)
	default:
		end(ir.Failed, fmt.Sprintf("verification %s: no runner can prove it (choose self-attestation, peer-review, human-sign-off or automated-check)", method), "", code)
	}
}

// underMethod says, of a capsule session the agent failed, which method it failed and why.
func underMethod(cfg *ActorConfig, reason string) string {
	if cfg.Verification == "" {
		return reason
	}
	return fmt.Sprintf("verification %s: the agent did not succeed: %s", cfg.Verification, reason)
}

// parkCapsule turns a running session into one waiting, with no process, under marker (a token's hash,
// or a value no token hashes to), saving w under key first.
func (pb *playbooks) parkCapsule(ctx context.Context, s store.Session, key, marker, why string, w capsuleWait, end func(ir.SessionStatus, string, string, *int), code *int) bool {
	raw, _ := json.Marshal(w)
	if err := pb.store.SavePause(ctx, key, s.ID, raw); err != nil {
		end(ir.Failed, fmt.Sprintf("cannot park the session for its verification: %v", err), "", code)
		return false
	}
	_, ok, err := pb.store.Modify(ctx, s.ID, []ir.SessionStatus{ir.Running}, func(m *store.Session) {
		m.Status, m.TokenHash, m.Reason = ir.Paused, marker, inputRequired+why
		m.PID, m.PIDStart, m.Verified, m.ExitCode = 0, 0, "", code
	})
	if err != nil || !ok {
		_ = pb.store.DropPauses(ctx, s.ID) // cancelled meanwhile: the wait must not outlive it
		if err != nil {
			end(ir.Failed, fmt.Sprintf("cannot park the session: %v", err), "", code)
		}
		return false
	}
	_ = pb.store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "input-required", Message: why})
	return true
}

func (pb *playbooks) parkSignOff(ctx context.Context, s store.Session, log io.Writer, end func(ir.SessionStatus, string, string, *int), code *int, verified string) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		end(ir.Failed, fmt.Sprintf("drawing a sign-off token: %v", err), "", code)
		return
	}
	token := "stk_" + base64.RawURLEncoding.EncodeToString(raw)
	hash := playproto.HashToken(token)
	why := "verification human-sign-off: the agent succeeded; a person must sign off its work"
	// The token is in the log before the session shows as paused: whoever sees it paused finds it.
	fmt.Fprintf(log, "autonomy: input required: %s\n", why)
	fmt.Fprintf(log, "autonomy: sign off with: autonomy runner update %s --token %s --approve (or --deny) [--evidence E]\n", s.ID, token)
	if !pb.parkCapsule(ctx, s, hash, hash, why, capsuleWait{Kind: "sign-off", Verified: verified}, end, code) {
		fmt.Fprintf(log, "autonomy: the session did not park (it ended meanwhile): the token above is void\n")
	}
}

func (pb *playbooks) parkReview(ctx context.Context, s store.Session, cfg *ActorConfig, resultPath string, log io.Writer, end func(ir.SessionStatus, string, string, *int), code *int, verified string) {
	if cfg.Reviewer == "" {
		end(ir.Failed, "verification peer-review: the actor names no review: reviewer (add review: REVIEWER and compile again)", "", code)
		return
	}
	digest := resultDigest(resultPath)
	text := fmt.Sprintf("Review session %s of actor %s. Its result is %s, sha256 %s. Approve by ending with a result whose verdict is \"approve\" and whose headSha is %s.", s.ID, s.Actor, resultPath, digest, digest)
	// The reviewer is the runner's own act for this session, whoever launched it.
	res, err := pb.ctl.launchAs(ctx, LaunchRequest{Actor: cfg.Reviewer, Ref: "session/" + s.ID, Text: text, Kind: "dispatch"}, "session:"+s.ID)
	if err != nil {
		end(ir.Failed, fmt.Sprintf("verification peer-review: the reviewer %q could not be launched: %v", cfg.Reviewer, err), "", code)
		return
	}
	rid := res.Session.ID
	why := fmt.Sprintf("verification peer-review: waiting for reviewer %s (session %s) to approve result sha256 %s", cfg.Reviewer, rid, digest)
	w := capsuleWait{Kind: "peer-review", Verified: verified, Reviewer: rid, Digest: digest}
	if !pb.parkCapsule(ctx, s, reviewKey(rid), "peer-review:"+rid, why, w, end, code) {
		_, _ = pb.ctl.Cancel(ctx, rid)
		return
	}
	fmt.Fprintf(log, "autonomy: input required: %s\n", why)
	// The reviewer may have ended before the wait was recorded.
	pb.settleReview(ctx, rid)
}

// resultDigest is the hex SHA-256 of a result file (of nothing, when it was not written).
func resultDigest(path string) string {
	data, _ := readResultFile(path)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// settleReview ends the session waiting for reviewer session rid, once rid has ended: done when
// rid ended done with a verdict approving the digest it was launched for, failed otherwise.
func (pb *playbooks) settleReview(ctx context.Context, rid string) {
	rs, ok, err := pb.store.Get(ctx, rid)
	if err != nil || !ok || !rs.Status.Ended() {
		return
	}
	raw, owner, ok, err := pb.store.TakePause(ctx, reviewKey(rid))
	if err != nil || !ok {
		return
	}
	var w capsuleWait
	_ = json.Unmarshal(raw, &w)
	status, reason, verified := ir.Failed, "", ""
	switch {
	case rs.Status != ir.Done:
		reason = fmt.Sprintf("verification peer-review: the reviewer's session %s ended %s: %s", rid, rs.Status, rs.Reason)
	default:
		verdict, head, err := readVerdict(pb.in.Path(StateDir + "/results/" + rid + ".json"))
		switch {
		case err != nil:
			reason = fmt.Sprintf("verification peer-review: the reviewer's session %s left no verdict: %v", rid, err)
		case !strings.EqualFold(head, w.Digest):
			reason = fmt.Sprintf("verification peer-review: the reviewer's verdict is on %q, not on this session's result (sha256 %s)", head, w.Digest)
		case verdict != "approve":
			reason = fmt.Sprintf("verification peer-review: the reviewer's session %s did not approve (verdict %q)", rid, verdict)
		default:
			status = ir.Done
			verified = fmt.Sprintf("%s; verification peer-review: approved by %s (session %s) on result sha256 %s", w.Verified, rs.Actor, rid, w.Digest)
		}
	}
	now := pb.now().UTC()
	n, changed, err := pb.store.Modify(ctx, owner, []ir.SessionStatus{ir.Paused}, func(m *store.Session) {
		if m.TokenHash != "peer-review:"+rid {
			return
		}
		m.Status, m.Reason, m.Verified, m.EndedAt, m.TokenHash = status, reason, verified, now, ""
		m.ResolvedBy = "session " + rid
	})
	if err == nil && changed && n.Status == status {
		msg := string(status)
		if reason != "" {
			msg += ": " + reason
		}
		if verified != "" {
			msg += " (" + verified + ")"
		}
		_ = pb.store.Log(ctx, store.Event{Session: owner, Actor: n.Actor, Kind: "ended", Message: msg})
	}
}

// readVerdict reads a reviewer's result: its verdict and the headSha it applies to.
func readVerdict(path string) (string, string, error) {
	r, err := readReview(path)
	return r.Verdict, r.HeadSha, err
}

// reviewResult is what the code flow reads of a reviewer's result: its verdict, the headSha it
// applies to, and whether it asks that a person approve the change it approves (ir.PersonKey,
// open-autonomy.review.v1's humanApprovalRequired).
type reviewResult struct {
	Verdict string `json:"verdict"`
	HeadSha string `json:"headSha"`
	Person  bool   `json:"humanApprovalRequired"`
}

// readReview reads a reviewer's result.
func readReview(path string) (reviewResult, error) {
	var v reviewResult
	data, err := readResultFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return v, fmt.Errorf("%s was not written", path)
	}
	if err != nil {
		return v, err
	}
	if err := strictjson.Unmarshal(data, &v); err != nil { // the keys its contract checked, exactly
		return reviewResult{}, fmt.Errorf("it is refused: %v", err)
	}
	return v, nil
}

// signOff answers a capsule session parked for a person's sign-off (raw is its wait): approve
// makes it done, deny failed. The token was checked and taken by Approve.
func (pb *playbooks) signOff(ctx context.Context, s store.Session, raw []byte, approve bool, evidence string) (store.Session, error) {
	var w capsuleWait
	_ = json.Unmarshal(raw, &w)
	by, now := pb.caller.describe(), pb.now().UTC()
	status, reason, verified := ir.Done, "", fmt.Sprintf("%s; verification human-sign-off: signed off by %s", w.Verified, by)
	if !approve {
		status, reason, verified = ir.Failed, "verification human-sign-off: the sign-off was denied by "+by, ""
	}
	n, changed, err := pb.store.Modify(ctx, s.ID, []ir.SessionStatus{ir.Paused}, func(m *store.Session) {
		m.Status, m.Reason, m.Verified, m.EndedAt, m.TokenHash = status, reason, verified, now, ""
		m.Evidence, m.ResolvedBy = evidence, by
	})
	if err != nil {
		return n, err
	}
	if !changed {
		return n, &RefusedError{Msg: fmt.Sprintf("refused: session %s was cancelled meanwhile", s.ID)}
	}
	_ = pb.store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "signed-off", Message: string(status) + ": " + reason + verified})
	return n, nil
}

// isSignOff reports whether a pause is a capsule session's sign-off wait.
func isSignOff(raw []byte) bool {
	var w capsuleWait
	return json.Unmarshal(raw, &w) == nil && w.Kind == "sign-off"
}
