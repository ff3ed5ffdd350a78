package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
)

// The purchase the dispute is about: the buyer's agent paid the seller
// the claim's 420.00 USD in USDC on Base Sepolia, through x402, before
// the dispute began. Both are public development accounts of the local
// facilitator (Anvil 2 and 3; the stack's readiness payer is 0, its payee
// 1, its refund operator 9).
const (
	purchaseNetwork = "eip155:84532"
	purchaseCents   = 42000
)

func buyer() localfacilitator.DevAccount  { return localfacilitator.DevAccounts()[2] }
func seller() localfacilitator.DevAccount { return localfacilitator.DevAccounts()[3] }

// purchase is the original payment an x402r refund returns.
type purchase struct {
	Network     string `json:"network"`
	Payer       string `json:"payer"`
	Transaction string `json:"transaction"`
}

// pay makes the purchase: the buyer signs an x402 exact payment of the
// claim's amount to the seller, and the stack's local facilitator
// settles it into its ledger.
func pay(ctx context.Context, c *client, facilitatorURL string) (purchase, error) {
	step(c.out, "0. The purchase the dispute is about: the buyer's agent pays the seller 420.00 USD in USDC through x402\n    (the stack's local facilitator settles it); this is the payment the award will refund")
	asset, ok := x402.USDC(purchaseNetwork)
	if !ok {
		return purchase{}, fmt.Errorf("no USDC on %s", purchaseNetwork)
	}
	offer, err := asset.Offer(strconv.FormatInt(purchaseCents*10_000, 10), seller().Address, 300)
	if err != nil {
		return purchase{}, err
	}
	payment, err := x402.NewExactPayment(buyer().Key, offer, time.Now(), rand.Reader)
	if err != nil {
		return purchase{}, err
	}
	f, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: facilitatorURL, Timeout: 10 * time.Second})
	if err != nil {
		return purchase{}, err
	}
	settled, err := f.Settle(ctx, x402.SettleRequest{X402Version: 2, PaymentPayload: payment, PaymentRequirements: offer})
	if err != nil {
		return purchase{}, fmt.Errorf("settling the purchase: %w", err)
	}
	if !settled.Success {
		return purchase{}, fmt.Errorf("the facilitator refused the purchase: %s %s", settled.ErrorReason, settled.ErrorMessage)
	}
	fmt.Fprintf(c.out, "   POST %s/settle → settled, transaction %s, payer %s\n", facilitatorURL, settled.Transaction, buyer().Address.Hex())
	return purchase{Network: purchaseNetwork, Payer: buyer().Address.Hex(), Transaction: settled.Transaction}, nil
}

// execution is the members of an execution the demo reads.
type execution struct {
	ExecutionID string `json:"executionId"`
	Status      string `json:"status"`
	AmountMinor int64  `json:"amountMinor"`
	Completion  *struct {
		Transaction  string `json:"transaction"`
		From         string `json:"from"`
		To           string `json:"to"`
		AmountAtomic string `json:"amountAtomic"`
	} `json:"completion"`
}

// walkToExecution takes an awarded case to its final award and refunds
// the purchase over the x402r rail, printing "execution <caseId>
// <executionId> <status>" as its last line.
func walkToExecution(ctx context.Context, c *client, cfg settings, caseID, awardHash string, bought purchase) error {
	out, site := c.out, "/api/disputes/"+caseID

	step(out, "18. Both sides consent to the award (the website's consent: each waives its post-award requests);\n    with nothing pending, the award is final at once")
	for _, token := range []string{cfg.claimant, cfg.respondent} {
		if err := c.call(ctx, "POST", site+"/consent", token, key(), map[string]any{}, 200, nil); err != nil {
			return err
		}
	}
	var status struct {
		Data struct {
			Final   bool   `json:"final"`
			FinalAt string `json:"finalAt"`
		}
	}
	if err := c.call(ctx, "GET", "/api/v2/cases/"+caseID+"/decision-status", cfg.claimant, "", nil, 200, &status); err != nil {
		return err
	}
	if !status.Data.Final {
		return errors.New("the award is not final after both sides consented")
	}
	fmt.Fprintf(out, "   final at %s\n", status.Data.FinalAt)

	step(out, "19. The claimant's agent, whom the award pays, commands the x402r refund of the remedy from the original\n    payment (201): the refund operator's signed transfer is settled through the facilitator, once")
	var done struct{ Data execution }
	if err := c.call(ctx, "POST", "/api/cases/"+caseID+"/executions", cfg.claimant, key(), map[string]any{
		"mode": "x402r_refund", "action": "refund", "awardHash": awardHash, "remedyIndex": 0, "payment": bought,
	}, 201, &done); err != nil {
		return err
	}
	e := done.Data
	if e.Status != "completed" || e.Completion == nil {
		return fmt.Errorf("execution %s is %s, not completed", e.ExecutionID, e.Status)
	}
	fmt.Fprintf(out, "   %d USD cents refunded: %s USDC atomic units from %s to %s, transaction %s\n\n",
		e.AmountMinor, e.Completion.AmountAtomic, e.Completion.From, e.Completion.To, e.Completion.Transaction)
	fmt.Fprintf(out, "execution %s %s %s\n", caseID, e.ExecutionID, e.Status)
	return nil
}
