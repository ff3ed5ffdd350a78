package draft

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"

	"github.com/pcourt/pcourt/libs/jcs"
)

// Evaluation is the definition of a narrow evaluation (schemaVersion
// narrow-evaluation-v2): one question, the criteria it is decided by, and
// the closed set of outcomes it may end in.
type Evaluation struct {
	ExternalEvaluationID string
	Question             Question
	AllowedOutcomes      []string
	EvidencePolicy       EvidencePolicy
	ReviewPolicy         ReviewPolicy
}

// Question is an evaluation's question.
type Question struct {
	Text     string
	Criteria []string
}

// The limits of an evaluation definition.
const (
	maxQuestionRunes  = 4000
	maxCriteria       = 20
	maxCriterionRunes = 500
	minOutcomes       = 2
	maxOutcomes       = 20
)

// outcomePattern is the shape of an outcome code: a lowercase word.
var outcomePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// evaluationJSON is the evaluation definition as the digests and the
// stored record see it.
type evaluationJSON struct {
	SchemaVersion        string         `json:"schemaVersion"`
	ExternalEvaluationID string         `json:"externalEvaluationId"`
	EvaluationDigest     string         `json:"evaluationDigest,omitempty"`
	Question             questionJSON   `json:"question"`
	AllowedOutcomes      []string       `json:"allowedOutcomes"`
	EvidencePolicy       EvidencePolicy `json:"evidencePolicy"`
	ReviewPolicy         ReviewPolicy   `json:"reviewPolicy"`
}

type questionJSON struct {
	Text     string   `json:"text"`
	Criteria []string `json:"criteria"`
}

func (e Evaluation) toJSON() evaluationJSON {
	return evaluationJSON{
		SchemaVersion:        SchemaEvaluation,
		ExternalEvaluationID: e.ExternalEvaluationID,
		Question:             questionJSON{Text: e.Question.Text, Criteria: nonNil(e.Question.Criteria)},
		AllowedOutcomes:      nonNil(e.AllowedOutcomes),
		EvidencePolicy:       e.EvidencePolicy,
		ReviewPolicy:         e.ReviewPolicy,
	}
}

func (j evaluationJSON) toEvaluation() Evaluation {
	return Evaluation{
		ExternalEvaluationID: j.ExternalEvaluationID,
		Question:             Question{Text: j.Question.Text, Criteria: clone(j.Question.Criteria)},
		AllowedOutcomes:      clone(j.AllowedOutcomes),
		EvidencePolicy:       j.EvidencePolicy,
		ReviewPolicy:         j.ReviewPolicy,
	}
}

// Digest returns the evaluation digest: the lowercase hex SHA-256 of the
// RFC 8785 canonical JSON of {schemaVersion: narrow-evaluation-v2,
// externalEvaluationId, question: {text, criteria}, allowedOutcomes,
// evidencePolicy, reviewPolicy}. Criteria and outcomes keep their order.
func (e Evaluation) Digest() string {
	return sha256Hex(mustCanonical(e.toJSON()))
}

func (e Evaluation) clone() Evaluation {
	e.Question.Criteria = clone(e.Question.Criteria)
	e.AllowedOutcomes = clone(e.AllowedOutcomes)
	return e
}

// validate checks the definition; field paths start at "evaluation".
func (e Evaluation) validate() error {
	if err := token("evaluation.externalEvaluationId", e.ExternalEvaluationID, 160); err != nil {
		return err
	}
	if err := text("evaluation.question.text", e.Question.Text, maxQuestionRunes, true); err != nil {
		return err
	}
	if n := len(e.Question.Criteria); n < 1 || n > maxCriteria {
		return invalid("evaluation.question.criteria", "must have 1 to "+strconv.Itoa(maxCriteria)+" items")
	}
	seen := map[string]bool{}
	for i, c := range e.Question.Criteria {
		field := fmt.Sprintf("evaluation.question.criteria[%d]", i)
		if err := text(field, c, maxCriterionRunes, false); err != nil {
			return err
		}
		if seen[c] {
			return invalid(field, "repeats an earlier criterion")
		}
		seen[c] = true
	}
	if n := len(e.AllowedOutcomes); n < minOutcomes || n > maxOutcomes {
		return invalid("evaluation.allowedOutcomes", "must have "+strconv.Itoa(minOutcomes)+" to "+strconv.Itoa(maxOutcomes)+" items")
	}
	seen = map[string]bool{}
	for i, o := range e.AllowedOutcomes {
		field := fmt.Sprintf("evaluation.allowedOutcomes[%d]", i)
		if !outcomePattern.MatchString(o) {
			return invalid(field, "must be 1 to 64 characters of a-z 0-9 _ starting with a letter")
		}
		if seen[o] {
			return invalid(field, "repeats an earlier outcome")
		}
		seen[o] = true
	}
	if !e.EvidencePolicy.Valid() {
		return invalid("evaluation.evidencePolicy", "must be one of "+joinList(evidencePolicies))
	}
	if !e.ReviewPolicy.Valid() {
		return invalid("evaluation.reviewPolicy", "must be one of "+joinList(reviewPolicies))
	}
	return nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// mustCanonical canonicalizes a value built from this package's JSON
// shapes: strings, integers, booleans, slices and structs, which always
// encode to I-JSON. A failure is a bug, not an input problem.
func mustCanonical(v any) []byte {
	b, err := jcs.Canonicalize(v)
	if err != nil {
		panic("draft: canonicalizing an internal value: " + err.Error())
	}
	return b
}

func clone[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
