package localfacilitator

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/x402"
)

// Server is the local facilitator's HTTP API.
type Server struct {
	cfg      Config
	assets   map[string]x402.Asset // by network
	verifier *x402.Verifier
	ledger   *Ledger
	logger   *slog.Logger
}

// rememberedSigners is how many recovered signers the checks remember (at
// least; x402.Verifier): the /settle of an authorization follows its
// /verify by milliseconds, and 8,192 is seconds of payments at the rates
// the benchmarks reach, in about 2 MB.
const rememberedSigners = 8192

// NewServer returns the facilitator over ledger, or the first unusable
// setting of cfg.
func NewServer(cfg Config, ledger *Ledger, logger *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("facilitator: %w", err)
	}
	assets := make(map[string]x402.Asset, len(cfg.Assets))
	for _, a := range cfg.Assets {
		assets[a.Network] = a
	}
	return &Server{cfg: cfg, assets: assets, verifier: x402.NewVerifier(rememberedSigners), ledger: ledger, logger: logger}, nil
}

// Register mounts POST /verify, POST /settle and GET /supported on r, behind
// the bearer token when one is configured and under the body limit. r is
// normally an httpserver router, whose middleware adds request ids, the
// access log and problem rendering.
func (s *Server) Register(r gin.IRouter) {
	g := r.Group("", s.authenticate, httpserver.BodyLimit(s.cfg.MaxBodyBytes))
	g.POST("/verify", s.handleVerify)
	g.POST("/settle", s.handleSettle)
	g.GET("/supported", s.handleSupported)
}

// authenticate demands the configured bearer token. The comparison is of
// SHA-256 digests in constant time, so neither the token's length nor its
// content leaks through timing.
func (s *Server) authenticate(c *gin.Context) {
	want := s.cfg.Token.Reveal()
	if want == "" {
		c.Next()
		return
	}
	h := c.GetHeader("Authorization")
	if h == "" {
		problem.Write(c, problem.New(problem.Unauthenticated, "This facilitator requires Authorization: Bearer <token>.").WithHeader("WWW-Authenticate", "Bearer"))
		return
	}
	scheme, token, _ := strings.Cut(h, " ")
	got, exp := sha256.Sum256([]byte(token)), sha256.Sum256([]byte(want))
	if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(got[:], exp[:]) != 1 {
		problem.Write(c, problem.New(problem.InvalidCredential, "The bearer token is not this facilitator's.").WithHeader("WWW-Authenticate", `Bearer error="invalid_token"`))
		return
	}
	c.Next()
}

func (s *Server) handleSupported(c *gin.Context) {
	c.JSON(http.StatusOK, s.supported())
}

func (s *Server) supported() x402.SupportedResponse {
	out := x402.SupportedResponse{}
	for _, a := range s.cfg.Assets {
		out.Kinds = append(out.Kinds, x402.SupportedKind{X402Version: x402.Version, Scheme: x402.SchemeExact, Network: a.Network})
	}
	return out
}

func (s *Server) handleVerify(c *gin.Context) {
	var req x402.VerifyRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		problem.Write(c, problem.From(err, nil))
		return
	}
	resp, err := s.verify(c.Request.Context(), req)
	if err != nil {
		s.ledgerFailed(c, "verify", err)
		return
	}
	c.JSON(http.StatusOK, resp)
}

// verify answers a /verify request: the checks of check, then the ledger's
// view of the nonce and the balance. Verify answers "would settling this now
// move the funds?", as a chain simulation would: a spent nonce is refused even
// when this very authorization spent it, or a resource server that lost its
// own record would sell a second resource for one payment. Only /settle
// answers a repeat with the original outcome, for reconciliation.
func (s *Server) verify(ctx context.Context, req x402.VerifyRequest) (x402.VerifyResponse, error) {
	p, r := s.check(req)
	if r != nil {
		s.logRefusal(ctx, "verify", req, r)
		return verifyRefusal(r), nil
	}
	st, err := s.ledger.state(ctx, p.acct, p.s.From, p.s.Nonce)
	if err != nil {
		return x402.VerifyResponse{}, err
	}
	switch {
	case st.usedBy != "":
		r = refuse(ReasonNonceAlreadyUsed, p.s.From.Hex(), "nonce %s of %s was used by transaction %s", p.s.Nonce, p.s.From.Hex(), st.usedBy)
	case st.balance < p.s.Amount:
		r = refuse(x402.ReasonInsufficientFunds, p.s.From.Hex(), "balance %d is less than %d", st.balance, p.s.Amount)
	}
	if r != nil {
		s.logRefusal(ctx, "verify", req, r)
		return verifyRefusal(r), nil
	}
	return x402.VerifyResponse{IsValid: true, Payer: p.s.From.Hex()}, nil
}

func (s *Server) handleSettle(c *gin.Context) {
	var req x402.SettleRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		problem.Write(c, problem.From(err, nil))
		return
	}
	resp, err := s.settle(c.Request.Context(), x402.VerifyRequest(req))
	if err != nil {
		s.ledgerFailed(c, "settle", err)
		return
	}
	c.JSON(http.StatusOK, resp)
}

// settle answers a /settle request. Every check of verify runs again and
// the ledger applies the transfer in one atomic step, which also answers a
// repeat of a settled authorization with its original outcome and settles
// races between identical concurrent requests. A caller unsure whether its
// first attempt went through may ask again after the checks would refuse
// it (past validBefore, say): a refused request is answered from the
// stored settlement of the same signed authorization when there is one.
func (s *Server) settle(ctx context.Context, req x402.VerifyRequest) (x402.SettleResponse, error) {
	p, r := s.check(req)
	if r != nil {
		st, found, err := s.storedSettlement(ctx, req)
		if err != nil {
			return x402.SettleResponse{}, err
		}
		if found {
			s.logger.InfoContext(ctx, "settlement replayed", "transaction", st.Transaction, "network", st.Network)
			return settleSuccess(st), nil
		}
		s.logRefusal(ctx, "settle", req, r)
		return settleRefusal(r, req.PaymentRequirements.Network), nil
	}
	p.s.SettledAt = s.cfg.Now().UTC()
	outcome, st, err := s.ledger.settle(ctx, p.acct, p.s)
	if err != nil {
		return x402.SettleResponse{}, err
	}
	switch outcome {
	case settledNow:
		s.logger.InfoContext(ctx, "payment settled", "transaction", st.Transaction, "network", st.Network,
			"payer", st.From.Hex(), "pay_to", st.To.Hex(), "amount", st.Amount)
		return settleSuccess(st), nil
	case settledBefore:
		s.logger.InfoContext(ctx, "settlement replayed", "transaction", st.Transaction, "network", st.Network)
		return settleSuccess(st), nil
	case nonceUsed:
		r = refuse(ReasonNonceAlreadyUsed, p.s.From.Hex(), "nonce %s of %s was used by another authorization", p.s.Nonce, p.s.From.Hex())
	case insufficient:
		r = refuse(x402.ReasonInsufficientFunds, p.s.From.Hex(), "balance of %s is less than %d", p.s.From.Hex(), p.s.Amount)
	case recipientFull:
		r = refuse(x402.ReasonInvalidTransactionState, p.s.From.Hex(), "the balance of %s would exceed the ledger limit %d", p.s.To.Hex(), MaxAmount)
	default:
		return x402.SettleResponse{}, fmt.Errorf("settling %s: unknown outcome %d", p.s.Transaction, outcome)
	}
	s.logRefusal(ctx, "settle", req, r)
	return settleRefusal(r, req.PaymentRequirements.Network), nil
}

// storedSettlement returns the stored settlement that answers req: the same
// signed authorization, paying the amount and recipient req asks for.
func (s *Server) storedSettlement(ctx context.Context, req x402.VerifyRequest) (Settlement, bool, error) {
	acct, tx, ok := s.replayKey(req)
	if !ok {
		return Settlement{}, false, nil
	}
	st, found, err := s.ledger.settlement(ctx, acct, tx)
	if err != nil || !found || !answers(st, req) {
		return Settlement{}, false, err
	}
	return st, true, nil
}

// ledgerFailed answers 503: the ledger did not answer, so whether a
// settlement happened is unknown to the caller, who asks again later. The
// cause goes to the log through the problem middleware, not to the caller.
func (s *Server) ledgerFailed(c *gin.Context, op string, err error) {
	problem.Write(c, problem.New(problem.Unavailable, "The facilitator's ledger is unavailable; ask again later.").Wrap(fmt.Errorf("%s: %w", op, err)))
}

func (s *Server) logRefusal(ctx context.Context, op string, req x402.VerifyRequest, r *refusal) {
	s.logger.InfoContext(ctx, "payment refused", "op", op, "reason", r.reason, "detail", r.message,
		"network", req.PaymentRequirements.Network, "payer", r.payer)
}

func verifyRefusal(r *refusal) x402.VerifyResponse {
	return x402.VerifyResponse{IsValid: false, InvalidReason: r.reason, InvalidMessage: r.message, Payer: r.payer}
}

func settleRefusal(r *refusal, network string) x402.SettleResponse {
	return x402.SettleResponse{Success: false, ErrorReason: r.reason, ErrorMessage: r.message, Payer: r.payer, Transaction: "", Network: network}
}

func settleSuccess(st Settlement) x402.SettleResponse {
	return x402.SettleResponse{
		Success:     true,
		Payer:       st.From.Hex(),
		Transaction: st.Transaction,
		Network:     st.Network,
		Amount:      strconv.FormatUint(st.Amount, 10),
	}
}
