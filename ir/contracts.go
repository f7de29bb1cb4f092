package ir

// The named result contracts. Each is a JSON Schema a result file must satisfy; they stay
// distinct, and docs/migrating.md says how they differ.
const (
	// DefaultContract is the result every agent session delivers unless its actor declares
	// another contract or opts out: a status, a summary and what was done. A session is done
	// only with a result that validates against it and says done.
	DefaultContract = "autonomy.result.v1"
	// NoResult is the opt-out (result: { schema: none }): done is presumed from exit status 0,
	// which is weaker than a verified result; validate warns about it.
	NoResult = "none"
	// ReviewContract is this standard's reviewer verdict on a proposed change, bound to the
	// commit it reviewed (and, on a code host that has them, the pull request).
	ReviewContract = "autonomy.review.v1"
	// ReferenceReviewContract is the reference implementation's (volter-ai/open-autonomy)
	// reviewer result, exactly as the reference defines it, so a reviewer skill written for the
	// reference produces results that validate here unchanged.
	ReferenceReviewContract = "open-autonomy.review.v1"
)

// ResultContracts holds the JSON Schema of every named result contract.
var ResultContracts = map[string]string{
	DefaultContract: `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://autonomy.dev/contracts/autonomy.result.v1.json",
  "title": "autonomy.result.v1",
  "description": "A session's result: whether the work is done, what happened and what was done. The default contract of every agent.",
  "type": "object",
  "required": ["status", "summary"],
  "properties": {
    "status": {
      "description": "done when the work is complete and verified, failed when it is not.",
      "enum": ["done", "failed"]
    },
    "summary": {"description": "What happened, in a sentence or two.", "type": "string", "minLength": 1, "maxLength": 65536},
    "done": {
      "description": "What was done, one line each.",
      "type": "array",
      "maxItems": 20,
      "items": {"type": "string", "minLength": 1, "maxLength": 256}
    }
  }
}`,
	ReviewContract: `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://autonomy.dev/contracts/autonomy.review.v1.json",
  "title": "autonomy.review.v1",
  "description": "A reviewer's verdict on a proposed change, bound to the commit it reviewed.",
  "type": "object",
  "required": ["verdict", "summary", "headSha"],
  "properties": {
    "verdict": {"enum": ["approve", "request-changes", "comment"]},
    "summary": {"type": "string", "minLength": 1},
    "headSha": {
      "description": "The full commit SHA of the head that was reviewed: a verdict applies to that commit only.",
      "type": "string",
      "pattern": "^[0-9a-fA-F]{40}([0-9a-fA-F]{24})?$"
    },
    "pullRequest": {
      "description": "The number of the pull request reviewed, on a code host that has them.",
      "type": "integer",
      "minimum": 1
    },
    "findings": {
      "type": "array",
      "items": {
        "type": "object",
        "required": ["message"],
        "properties": {
          "path": {"type": "string"},
          "line": {"type": "integer", "minimum": 1},
          "severity": {"enum": ["blocker", "major", "minor", "nit"]},
          "message": {"type": "string", "minLength": 1}
        }
      }
    }
  }
}`,
	// The reference's REVIEW_RESULT_JSON_SCHEMA (packages/core/src/ir.ts), keyword for keyword.
	ReferenceReviewContract: `{
  "$id": "open-autonomy.review.v1",
  "type": "object",
  "additionalProperties": false,
  "required": ["schema", "pr", "headSha", "verdict", "outcome", "summary", "findings", "humanApprovalRequired"],
  "properties": {
    "schema": {"const": "open-autonomy.review.v1"},
    "pr": {"type": "integer", "minimum": 1},
    "headSha": {"type": "string", "pattern": "^[0-9a-fA-F]{40}$"},
    "verdict": {"enum": ["success", "failure", "skip"]},
    "outcome": {"enum": ["approved", "changes-requested", "human-required", "not-applicable"]},
    "summary": {"type": "string", "minLength": 1, "maxLength": 1000},
    "findings": {"type": "array", "maxItems": 50, "items": {"type": "string", "maxLength": 2000}},
    "humanApprovalRequired": {"type": "boolean"},
    "humanTask": {
      "type": "object",
      "additionalProperties": false,
      "required": ["ask", "assignTo", "completion"],
      "properties": {
        "ask": {"type": "string", "minLength": 1, "maxLength": 2000},
        "assignTo": {"type": "string", "minLength": 1, "maxLength": 200},
        "completion": {
          "type": "object",
          "additionalProperties": false,
          "required": ["ac", "via", "check"],
          "properties": {
            "ac": {"type": "string", "minLength": 1, "maxLength": 2000},
            "via": {"enum": ["review", "label", "artifact", "command"]},
            "check": {"enum": ["deterministic", "judge", "both"]}
          }
        }
      }
    }
  },
  "allOf": [
    {
      "if": {"properties": {"verdict": {"const": "success"}}, "required": ["verdict"]},
      "then": {"properties": {"outcome": {"const": "approved"}}}
    },
    {
      "if": {"properties": {"verdict": {"const": "failure"}}, "required": ["verdict"]},
      "then": {"properties": {"outcome": {"enum": ["changes-requested", "human-required"]}, "humanApprovalRequired": {"const": false}}}
    },
    {
      "if": {"properties": {"verdict": {"const": "skip"}}, "required": ["verdict"]},
      "then": {"properties": {"outcome": {"const": "not-applicable"}, "humanApprovalRequired": {"const": false}}}
    },
    {
      "if": {"properties": {"outcome": {"const": "human-required"}}, "required": ["outcome"]},
      "then": {"required": ["humanTask"]},
      "else": {"not": {"required": ["humanTask"]}}
    }
  ]
}`,
}

// ContractNames lists the named result contracts.
func ContractNames() []string {
	return []string{DefaultContract, ReviewContract, ReferenceReviewContract}
}

// contractRules explains the conditional rules of the named contracts, by contract and schema
// location, in the words of the reference's own parser: "value must be false" alone does not
// say which rule a result broke.
var contractRules = map[string]string{
	ReferenceReviewContract + "#/allOf/0/then/properties/outcome":               "a successful verdict must be approved",
	ReferenceReviewContract + "#/allOf/1/then/properties/outcome":               "a failed verdict must request changes or human attention",
	ReferenceReviewContract + "#/allOf/1/then/properties/humanApprovalRequired": "only an approved result may require the separate human-approval gate",
	ReferenceReviewContract + "#/allOf/2/then/properties/outcome":               "a skipped verdict must be not-applicable",
	ReferenceReviewContract + "#/allOf/2/then/properties/humanApprovalRequired": "only an approved result may require the separate human-approval gate",
	ReferenceReviewContract + "#/allOf/3/then":                                  "a human-required outcome must give the humanTask: ask, assignTo and completion",
	ReferenceReviewContract + "#/allOf/3/else":                                  "humanTask is only valid for a human-required outcome",
}

// DefaultResult is the default result contract, as an actor that declares none has it.
var DefaultResult = &Result{Named: String{Value: DefaultContract}}

// Contract is the result contract a session of the actor must deliver to end done: the one it
// declares, else the default (autonomy.result.v1), for an agent whose behavior is a skill and for
// a script alike (a script writes its result, one JSON object, to the file AUTONOMY_RESULT
// names). It is nil for a person and for an actor that opts out with result: { schema: none },
// whose exit status 0 alone is done.
func (a *Actor) Contract() *Result {
	switch {
	case a.IsHuman():
		return nil
	case a.Result != nil && a.Result.Named.Value == NoResult:
		return nil
	case a.Result != nil:
		return a.Result
	}
	return DefaultResult
}

// ExitStatusOnly reports whether the actor opts out of a verified result (result: { schema: none }).
func (a *Actor) ExitStatusOnly() bool { return a.Result != nil && a.Result.Named.Value == NoResult }

// IsReview reports whether a result under r is a review, naming a verdict and the head it
// reviewed: the review contracts, or an inline schema whose properties name verdict and headSha.
func (r *Result) IsReview() bool {
	if r == nil {
		return false
	}
	if r.Named.Value == ReviewContract || r.Named.Value == ReferenceReviewContract {
		return true
	}
	doc, _ := r.Inline.(map[string]any)
	props, _ := doc["properties"].(map[string]any)
	_, verdict := props["verdict"]
	_, head := props["headSha"]
	return verdict && head
}

// PersonKey is the key of a reviewer's result that asks for a person's approval of the change
// it approved (open-autonomy.review.v1's humanApprovalRequired): a substrate holds the merge
// for a maintainer while it is true.
const PersonKey = "humanApprovalRequired"

// AsksForPerson reports whether a result under r can carry PersonKey: the reference's review
// contract, or an inline schema that names it among its properties.
func (r *Result) AsksForPerson() bool {
	if r == nil {
		return false
	}
	if r.Named.Value == ReferenceReviewContract {
		return true
	}
	doc, _ := r.Inline.(map[string]any)
	props, _ := doc["properties"].(map[string]any)
	_, ok := props[PersonKey]
	return ok
}
