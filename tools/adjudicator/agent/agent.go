// Package agent is the reference AI adjudicator of pcourt: a tribunal
// member (role adjudicator) that any operator can run. Told by a signed
// case event (adjudication_requested) that a case waits for it, it reads
// the case's review package through the API, drafts a proposed opinion
// with a model behind the OpenAI-compatible chat completions protocol, or
// with the documented deterministic Rubric when no model is configured,
// checks the proposal against the record as the cases service will, and
// files it. What it cannot check, or cannot draft, it hands to a human
// (humanAttention) with the reason; it never files an unchecked proposal,
// and it never acts under a configuration other than the one the case
// pinned.
//
// tools/adjudicator is its command; tools/devstack starts one in-process.
// docs/tribunal-adjudicator.md is its manual.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/webhook/receiver"
)

// EventAdjudicationRequested is the case event type the agent acts on.
// Deliveries of every other type are acknowledged and ignored.
const EventAdjudicationRequested = "adjudication_requested"

// drafter drafts a proposal for a case. An error of type *humanNeeded means
// the drafter will not propose and says why.
type drafter interface {
	draft(ctx context.Context, pkg reviewPackage, requestedAt time.Time, log *slog.Logger) (award.Proposal, error)
}

// humanNeeded is a drafter's or a check's refusal to propose: the agent
// files a request for human attention with the reason instead.
type humanNeeded struct{ reason string }

func (h *humanNeeded) Error() string { return "human attention needed: " + h.reason }

func needHuman(reason string) error { return &humanNeeded{reason: reason} }

// maxReasonBytes bounds a human attention reason.
const maxReasonBytes = 2000

// Agent is one running adjudicator. Its Handler receives the case events;
// each adjudication_requested event is processed once, after the
// acknowledgement.
type Agent struct {
	cfg           Config
	log           *slog.Logger
	api           *pcourtAPI
	drafter       drafter
	configuration award.Configuration
	digest        string
	handler       *receiver.Handler

	// work ends the processing of events when the agent shuts down.
	work       context.Context
	cancelWork context.CancelFunc

	mu sync.Mutex
	// busy holds the runs being processed, so that two events about one
	// run do not draft twice.
	busy map[string]bool
}

// New returns an agent for cfg. It makes no call: the key set is fetched
// at the first delivery.
func New(cfg Config) (*Agent, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("adjudicator configuration: %w", err)
	}
	configuration := ConfigurationOf(cfg)
	digest, err := ConfigurationDigest(configuration)
	if err != nil {
		return nil, err
	}
	a := &Agent{
		cfg:           cfg,
		log:           cfg.Logger,
		api:           &pcourtAPI{base: cfg.APIURL, token: cfg.Token, client: cfg.HTTPClient},
		configuration: configuration,
		digest:        digest,
		busy:          map[string]bool{},
	}
	if cfg.Model.URL == "" {
		a.drafter = rubricDrafter{}
	} else {
		a.drafter = modelDrafter{
			model:        modelClient{cfg: cfg.Model, client: &http.Client{}},
			instructions: cfg.Instructions,
			now:          cfg.Now,
			retry:        a.retry,
		}
	}
	a.work, a.cancelWork = context.WithCancel(context.Background())

	keys, err := receiver.NewJWKSCache(cfg.JWKSURL, receiver.JWKSConfig{Client: cfg.HTTPClient, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	a.handler, err = receiver.NewHandler(keys, a.receive, receiver.Config{
		EndpointID:  cfg.EndpointID,
		Environment: cfg.Environment,
		Async:       true,
		Logger:      cfg.Logger,
		Now:         cfg.Now,
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Configuration is the configuration the agent runs under, the one a case
// must pin for the agent to act on it.
func (a *Agent) Configuration() award.Configuration { return a.configuration }

// ConfigurationDigest is the SHA-256 of the configuration's canonical bytes.
func (a *Agent) ConfigurationDigest() string { return a.digest }

// Handler is the receiver of the agent's case event callbacks: it verifies
// each delivery (libs/webhook/receiver, against the published key set and
// the agent's endpoint id), answers 202, and processes an event id once.
func (a *Agent) Handler() http.Handler { return a.handler }

// Run serves the Handler on cfg.Listen (with GET /livez) until ctx ends,
// then shuts down, letting running work finish for up to 30 seconds.
func (a *Agent) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return fmt.Errorf("adjudicator: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.Handle("/", a.handler)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second}
	a.log.Info("adjudicator listening", slog.String("addr", ln.Addr().String()), slog.Any("config", a.cfg),
		slog.String("provider", a.configuration.Provider), slog.String("configuration_digest", a.digest))

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		a.cancelWork()
		return err
	case <-ctx.Done():
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	errs := []error{srv.Shutdown(stopCtx)}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, err)
	}
	errs = append(errs, a.Shutdown(stopCtx))
	return errors.Join(errs...)
}

// Shutdown refuses further deliveries and waits for running work until ctx
// ends, then cancels what still runs. Call it after the server that serves
// Handler has stopped.
func (a *Agent) Shutdown(ctx context.Context) error {
	err := a.handler.Shutdown(ctx)
	a.cancelWork()
	return err
}

// receive is the receiver's callback, run after the 202. It returns an
// error only when a step failed for good after its retries (the receiver
// then forgets the event id, so a replay of the event is processed again);
// a refusal of the API is logged and is the end of the event.
func (a *Agent) receive(ctx context.Context, d receiver.Delivery) error {
	ev := d.Event
	log := a.log.With(slog.String("event_id", ev.EventID), slog.String("case_id", ev.CaseID), slog.String("type", ev.Type))
	if ev.Type != EventAdjudicationRequested {
		log.Debug("case event ignored: not an adjudication request")
		return nil
	}
	if d.Test {
		log.Info("test event ignored: no case stands behind it")
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(a.work, cancel)
	defer stop()

	err := a.adjudicate(ctx, ev.CaseID, ev.OccurredAt, log)
	var apiErr *APIError
	if errors.As(err, &apiErr) && !apiErr.Temporary() {
		log.Error("adjudication stopped: the API refused", slog.Int("status", apiErr.Status), slog.String("code", apiErr.Code), slog.Any("err", err))
		return nil
	}
	return err
}

// Adjudicate processes one case as an adjudication_requested event of
// requestedAt would: it reads the review package, and when the case's run
// is open, drafts, checks and files a proposal, or files a request for
// human attention. requestedAt dates the rubric's remedies.
func (a *Agent) Adjudicate(ctx context.Context, caseID string, requestedAt time.Time) error {
	return a.adjudicate(ctx, caseID, requestedAt, a.log.With(slog.String("case_id", caseID)))
}

func (a *Agent) adjudicate(ctx context.Context, caseID string, requestedAt time.Time, log *slog.Logger) error {
	var pkg reviewPackage
	err := a.retry(ctx, "reading the review package", log, func(ctx context.Context) error {
		var err error
		pkg, err = a.api.reviewPackage(ctx, caseID)
		return err
	})
	if err != nil {
		return err
	}
	if pkg.Run == nil || pkg.Run.Status != runOpen {
		status := "absent"
		if pkg.Run != nil {
			status = pkg.Run.Status
		}
		log.Info("nothing to do: the case has no open run", slog.String("run_status", status))
		return nil
	}
	log = log.With(slog.String("run_id", pkg.Run.RunID))
	if pkg.filed() {
		log.Info("nothing to do: a proposal is already filed for the run")
		return nil
	}
	if !a.claim(caseID, pkg.Run.RunID) {
		log.Info("nothing to do: the run is being processed already")
		return nil
	}
	defer a.release(caseID, pkg.Run.RunID)

	f := filing{RunID: pkg.Run.RunID, InputDigest: pkg.Record.Digest}
	if p, err := a.propose(ctx, pkg, requestedAt, log); err == nil {
		f.Proposal = &p
	} else {
		var human *humanNeeded
		if !errors.As(err, &human) {
			return err
		}
		f.HumanAttention = &humanAttention{Reason: truncate(human.reason, maxReasonBytes)}
	}
	return a.file(ctx, caseID, f, log)
}

// propose drafts and checks; a *humanNeeded error says why it will not.
func (a *Agent) propose(ctx context.Context, pkg reviewPackage, requestedAt time.Time, log *slog.Logger) (award.Proposal, error) {
	if pkg.ConfigurationDigest != a.digest {
		return award.Proposal{}, needHuman(fmt.Sprintf(
			"the case pinned adjudicator configuration %s, but this adjudicator runs %s (%s %s %s): it does not act under another configuration",
			pkg.ConfigurationDigest, a.digest, a.configuration.Provider, a.configuration.Model, a.configuration.ModelVersion))
	}
	if len(pkg.Record.Items) == 0 {
		return award.Proposal{}, needHuman("the confirmed record has no item to cite")
	}
	p, err := a.drafter.draft(ctx, pkg, requestedAt, log)
	if err != nil {
		return award.Proposal{}, err
	}
	// The model drafter checked already; the rubric's proposal is checked
	// here like any other, so that nothing unchecked is filed.
	if err := checkProposal(p, pkg, a.cfg.Now()); err != nil {
		return award.Proposal{}, needHuman(fmt.Sprintf("the %s drafted a proposal that fails the checks: %v", a.configuration.Provider, err))
	}
	return p, nil
}

// file posts f, the same bytes under the same key at every try.
func (a *Agent) file(ctx context.Context, caseID string, f filing, log *slog.Logger) error {
	body, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("writing the filing: %w", err)
	}
	key := idempotencyKey(caseID, f.RunID)
	err = a.retry(ctx, "filing", log, func(ctx context.Context) error {
		return a.api.file(ctx, caseID, key, body)
	})
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict && apiErr.Code == codeRunNotOpen {
		log.Info("run superseded: the filing's run is no longer open", slog.String("code", apiErr.Code), slog.String("message", apiErr.Message))
		return nil
	}
	if err != nil {
		return err
	}
	if f.Proposal != nil {
		log.Info("proposal filed", slog.String("outcome", f.Proposal.Outcome), slog.Int("remedies", len(f.Proposal.Remedies)),
			slog.Int("citations", len(f.Proposal.Citations)))
	} else {
		log.Warn("human attention requested", slog.String("reason", f.HumanAttention.Reason))
	}
	return nil
}

// retry runs step until it succeeds, fails for good, or has run
// cfg.Attempts times, waiting with a doubling backoff between tries. A
// network error, a 5xx or a 429 is worth another try; an API refusal is
// not.
func (a *Agent) retry(ctx context.Context, what string, log *slog.Logger, step func(context.Context) error) error {
	wait := a.cfg.Backoff
	for attempt := 1; ; attempt++ {
		err := step(ctx)
		if err == nil || !temporary(err) || ctx.Err() != nil {
			return err
		}
		if attempt >= a.cfg.Attempts {
			return fmt.Errorf("%s: %d attempts: %w", what, attempt, err)
		}
		log.Warn(what+" failed, retrying", slog.Int("attempt", attempt), slog.Duration("wait", wait), slog.Any("err", err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), err)
		case <-t.C:
		}
		wait = min(2*wait, a.cfg.MaxBackoff)
	}
}

// temporary reports whether another try may succeed: an answer that says
// so (a 5xx, a 429), or a transport failure (a refused connection, a
// reset, a timeout), which the HTTP client reports as a *url.Error.
func temporary(err error) bool {
	var api *APIError
	if errors.As(err, &api) {
		return api.Temporary()
	}
	var model *modelError
	if errors.As(err, &model) {
		return model.Temporary()
	}
	var transport *url.Error
	return errors.As(err, &transport)
}

func (a *Agent) claim(caseID, runID string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := caseID + "\n" + runID
	if a.busy[k] {
		return false
	}
	a.busy[k] = true
	return true
}

func (a *Agent) release(caseID, runID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.busy, caseID+"\n"+runID)
}
