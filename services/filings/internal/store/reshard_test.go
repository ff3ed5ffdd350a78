package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/reshard"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

const draftCount = 30

var now = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

type ids struct{ n int }

func (i ids) DraftID() string { return fmt.Sprintf("dr_%03d", i.n) }
func (i ids) CaseID() string  { return fmt.Sprintf("cs_%03d", i.n) }
func (i ids) FeeID() string   { return fmt.Sprintf("fee_%03d", i.n) }

func input() draft.PrepareInput {
	return draft.PrepareInput{
		ExternalCaseID:   "ord-2026-000417",
		CaseMode:         draft.CaseModeProceeding,
		IntakeMode:       draft.IntakeClaimantInitiated,
		ConfirmationMode: draft.ConfirmAllParticipants,
		Procedure:        draft.Procedure{Profile: draft.ProfileStandard},
		Participants: []draft.Participant{
			{ID: "p-claimant", Side: draft.SideClaimant, PrincipalID: "acct:maria.lopez", PrincipalKind: draft.PrincipalIndividual, AuthorizationMode: draft.AuthPartnerCredential, Initiator: true},
			{ID: "p-respondent", Side: draft.SideRespondent, PrincipalID: "org:northwind-supplies", PrincipalKind: draft.PrincipalOrganization, AuthorizationMode: draft.AuthPartnerCredential},
		},
		Claim:       draft.Claim{AmountInDisputeMinor: 120_000, Remedy: draft.RemedyMoneyObligation, Summary: "Paid order 417 was never delivered."},
		TenantID:    "tn_acme",
		Environment: "sandbox",
		PartnerID:   "pt_marketplace",
		CreatedBy:   "cred_orch_01",
	}
}

var rules = draft.Rules{Version: "pcourt-rules-2026-10", Hash: strings.Repeat("ab", 32)}

// writeDrafts stores draftCount drafts, every third with its fee bound to
// a payment.
func writeDrafts(t *testing.T, drafts *store.Drafts) {
	t.Helper()
	ctx := context.Background()
	for n := range draftCount {
		d, err := draft.Prepare(input(), rules, now, ids{n})
		require.NoError(t, err)
		require.NoError(t, drafts.Create(ctx, d))
		if n%3 == 0 {
			bound, err := drafts.BindFeePayment(ctx, d.ID(), "", fmt.Sprintf("pay-%03d", n))
			require.NoError(t, err)
			require.True(t, bound)
		}
	}
}

type draftView struct {
	Stored     store.Stored
	FeePayment string
}

func readDrafts(t *testing.T, drafts *store.Drafts) map[string]draftView {
	t.Helper()
	ctx := context.Background()
	out := map[string]draftView{}
	for n := range draftCount {
		id := ids{n}.DraftID()
		s, err := drafts.Load(ctx, id)
		require.NoError(t, err, id)
		pay, err := drafts.FeePaymentOf(ctx, id)
		require.NoError(t, err)
		require.Equal(t, n%3 == 0, pay != "", "%s's fee binding", id)
		out[id] = draftView{Stored: s, FeePayment: pay}
	}
	return out
}

func newDrafts(t *testing.T, rdb redis.UniversalClient, shards int) *store.Drafts {
	t.Helper()
	d, err := store.NewDrafts(rdb, shards, nil)
	require.NoError(t, err)
	return d
}

func TestReshardMovesEveryDraftToTheNewCountAndBack(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	at16 := newDrafts(t, rdb, 16)
	writeDrafts(t, at16)
	want := readDrafts(t, at16)

	rep, err := store.Reshard(ctx, rdb, 16, 64, reshard.Options{Limit: 4})
	require.NoError(t, err)
	require.False(t, rep.Complete, "stopped after four drafts, as a crash would")
	rep, err = store.Reshard(ctx, rdb, 16, 64, reshard.Options{})
	require.NoError(t, err)
	require.True(t, rep.Complete)
	require.Equal(t, draftCount, rep.Entities)
	require.Equal(t, want, readDrafts(t, newDrafts(t, rdb, 64)), "every draft reads back equal with 64 shards")

	keys, err := rdb.Keys(ctx, "pc:filings:*").Result()
	require.NoError(t, err)
	to64 := outbox.Sharding{Service: "filings", Count: 64}
	for _, k := range keys {
		_, rest, _ := strings.Cut(k, "}:")
		id := rest[strings.IndexByte(rest, ':')+1:]
		require.True(t, strings.HasPrefix(k, "pc:filings:"+to64.Tag(id)+":"), "%s is under its draft's new tag", k)
	}

	_, err = store.Reshard(ctx, rdb, 64, 16, reshard.Options{})
	require.NoError(t, err)
	require.Equal(t, want, readDrafts(t, at16), "and with 16 again")
}

func TestReshardRefusesWhileTheOutboxHoldsACaseOpening(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	at16 := newDrafts(t, rdb, 16)
	writeDrafts(t, at16)
	stream := at16.Sharding().Stream(at16.Sharding().Tag(ids{0}.DraftID()))
	require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"id", "case-opened:cs_000"}}).Err())

	before, err := rdb.Keys(ctx, "*").Result()
	require.NoError(t, err)

	_, err = store.Reshard(ctx, rdb, 16, 64, reshard.Options{})
	require.ErrorIs(t, err, reshard.ErrOutboxNotEmpty)
	after, err := rdb.Keys(ctx, "*").Result()
	require.NoError(t, err)
	require.ElementsMatch(t, before, after, "nothing moved")
	require.Len(t, readDrafts(t, at16), draftCount)
}
