package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/requestid"
)

// integration is the JSON shape of GET /api/v2/integration.
type integration struct {
	CredentialID   string         `json:"credentialId"`
	Tenant         string         `json:"tenant"`
	Environment    string         `json:"environment"`
	Role           string         `json:"role"`
	PartnerID      string         `json:"partnerId"`
	AgentID        string         `json:"agentId,omitempty"`
	SchemaVersions schemaVersions `json:"schemaVersions"`
}

// schemaVersions are the spec's version constants, so an integrator can
// check what it is talking to before it sends anything.
type schemaVersions struct {
	CaseDraft        string `json:"caseDraft"`
	ConfirmedFiling  string `json:"confirmedFiling"`
	ProcedurePlan    string `json:"procedurePlan"`
	Evaluation       string `json:"evaluation"`
	CaseEvent        string `json:"caseEvent"`
	WebhookSignature string `json:"webhookSignature"`
	X402             int    `json:"x402"`
}

var currentSchemaVersions = schemaVersions{
	CaseDraft:        "case-draft-v2",
	ConfirmedFiling:  "confirmed-filing-v2",
	ProcedurePlan:    "case-procedure-plan-v2",
	Evaluation:       "narrow-evaluation-v2",
	CaseEvent:        api.CaseEventSchema,
	WebhookSignature: "pc-webhook-ed25519-v1",
	X402:             2,
}

func getIntegration(c *gin.Context) {
	cred, _ := auth.CredentialFrom(c.Request.Context())
	c.JSON(http.StatusOK, gin.H{
		"data":      toIntegration(cred),
		"requestId": requestid.Get(c),
	})
}

func toIntegration(cred auth.Credential) integration {
	return integration{
		CredentialID:   cred.PublicID,
		Tenant:         cred.Tenant,
		Environment:    string(cred.Environment),
		Role:           string(cred.Role),
		PartnerID:      cred.PartnerID,
		AgentID:        cred.AgentID,
		SchemaVersions: currentSchemaVersions,
	}
}
