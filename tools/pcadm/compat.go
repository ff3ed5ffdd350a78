package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

const compatUsage = `usage: pcadm compat <command> [flags]
commands:
  policy   [--family F] [--integration ID]...        the effective policy (and an integration's window)
  extend   --family F --integration ID --sunset DAY   approve a later deadline (never an earlier one)
  brownout --family F --start TIME --end TIME         schedule a brownout after the window's end (RFC 3339)
  contact  [--partner P --email ADDR]                 set a partner's notice address ("" removes); no flags: list
  notices  [--family F] [--state S]                   notices sent, failed, undeliverable
  audit    [--count N]                                every change, newest first
The edge's admin listener is EDGE_ADMIN_URL (http://127.0.0.1:9080), its token EDGE_ADMIN_TOKEN;
changes are audited under --actor (PCADM_ACTOR, then USER)`

// adminClient calls the edge's compatibility admin API.
type adminClient struct {
	base   string
	token  string
	actor  string
	client *http.Client
}

func compat(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(compatUsage)
	}
	c := adminClient{base: strings.TrimSuffix(getenv("EDGE_ADMIN_URL"), "/"), token: getenv("EDGE_ADMIN_TOKEN"),
		actor: getenv("PCADM_ACTOR"), client: &http.Client{Timeout: 30 * time.Second}}
	if c.base == "" {
		c.base = "http://127.0.0.1:9080"
	}
	if c.actor == "" {
		c.actor = getenv("USER")
	}
	if c.token == "" {
		return errors.New("EDGE_ADMIN_TOKEN is not set: the edge's admin API needs its token")
	}
	cmd, rest := args[0], args[1:]
	fs := flag.NewFlagSet("compat "+cmd, flag.ContinueOnError)
	fs.StringVar(&c.actor, "actor", c.actor, "who makes the change (audited)")
	family := fs.String("family", "", "v2-filings, v2-cases or website-cases")
	switch cmd {
	case "policy":
		var ids multi
		fs.Var(&ids, "integration", "credential public id or partner id (repeatable)")
		if err := fs.Parse(rest); err != nil {
			return err
		}
		q := url.Values{"integration": ids}
		if *family != "" {
			q.Set("family", *family)
		}
		var out struct {
			Enabled  bool `json:"enabled"`
			Families []struct {
				Family, GeneralAvailabilityDate, Source, InvalidDate, Stage, WindowEnd, IntegrationWindowEnd string
				NextMilestone                                                                                *struct {
					Name string
					At   time.Time
				}
				Brownouts  []struct{ Start, End time.Time }
				Extensions []struct{ Integration, Sunset string }
			} `json:"families"`
		}
		if err := c.do(ctx, http.MethodGet, "/admin/compatibility/policy?"+q.Encode(), nil, &out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "announcements: %s\n", map[bool]string{true: "on (SERVICE_API_CANONICAL_ROUTES=true)", false: "off"}[out.Enabled])
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "FAMILY\tGA\tSOURCE\tSTAGE\tWINDOW END\tINTEGRATION END\tNEXT MILESTONE\tBROWNOUTS\tEXTENSIONS")
		for _, f := range out.Families {
			ga := dash(f.GeneralAvailabilityDate)
			if f.InvalidDate != "" {
				ga = "invalid " + strconv.Quote(f.InvalidDate)
			}
			next := "-"
			if f.NextMilestone != nil {
				next = f.NextMilestone.Name + " " + f.NextMilestone.At.Format(time.DateOnly)
			}
			var bs, es []string
			for _, b := range f.Brownouts {
				bs = append(bs, b.Start.Format(time.RFC3339)+"/"+b.End.Format(time.RFC3339))
			}
			for _, e := range f.Extensions {
				es = append(es, e.Integration+"="+e.Sunset)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Family, ga, dash(f.Source), f.Stage, dash(f.WindowEnd),
				dash(f.IntegrationWindowEnd), next, dash(strings.Join(bs, " ")), dash(strings.Join(es, " ")))
		}
		return w.Flush()
	case "extend":
		integration := fs.String("integration", "", "credential public id or partner id (required)")
		sunset := fs.String("sunset", "", "the approved deadline, YYYY-MM-DD (required)")
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if *family == "" || *integration == "" || *sunset == "" {
			return errors.New("--family, --integration and --sunset are required")
		}
		path := "/admin/compatibility/families/" + url.PathEscape(*family) + "/extensions/" + url.PathEscape(*integration)
		if err := c.do(ctx, http.MethodPut, path, map[string]string{"sunset": *sunset}, nil); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "extension approved: %s %s until %s (audited as %s)\n", *family, *integration, *sunset, c.actor)
		return nil
	case "brownout":
		start := fs.String("start", "", "RFC 3339 start (required)")
		end := fs.String("end", "", "RFC 3339 end, at most 24 hours later (required)")
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if *family == "" || *start == "" || *end == "" {
			return errors.New("--family, --start and --end are required")
		}
		path := "/admin/compatibility/families/" + url.PathEscape(*family) + "/brownouts"
		if err := c.do(ctx, http.MethodPost, path, map[string]string{"start": *start, "end": *end}, nil); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "brownout scheduled: %s %s – %s (audited as %s)\n", *family, *start, *end, c.actor)
		return nil
	case "contact":
		partner := fs.String("partner", "", "partner id")
		email := fs.String("email", "", "notice address; empty removes it")
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if *partner == "" {
			var out map[string]string
			if err := c.do(ctx, http.MethodGet, "/admin/compatibility/contacts", nil, &out); err != nil {
				return err
			}
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "PARTNER\tEMAIL")
			for _, p := range sortedKeys(out) {
				fmt.Fprintf(w, "%s\t%s\n", p, out[p])
			}
			return w.Flush()
		}
		if err := c.do(ctx, http.MethodPut, "/admin/compatibility/contacts/"+url.PathEscape(*partner), map[string]string{"email": *email}, nil); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "contact of %s: %s (audited as %s)\n", *partner, dash(*email), c.actor)
		return nil
	case "notices":
		state := fs.String("state", "", "sent, failed, undeliverable or sending")
		if err := fs.Parse(rest); err != nil {
			return err
		}
		q := url.Values{}
		if *family != "" {
			q.Set("family", *family)
		}
		if *state != "" {
			q.Set("state", *state)
		}
		var out []struct {
			Family, Since, Credential, Milestone, State, Partner, To, Detail string
			Attempts                                                         int
			At                                                               time.Time
		}
		if err := c.do(ctx, http.MethodGet, "/admin/compatibility/notices?"+q.Encode(), nil, &out); err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "FAMILY\tCREDENTIAL\tMILESTONE\tSTATE\tTO\tATTEMPTS\tAT\tDETAIL")
		for _, n := range out {
			window := n.Family // a route's own window, when it joined later: family@since
			if n.Since != "" {
				window += "@" + n.Since
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", window, n.Credential, n.Milestone, n.State, dash(n.To), n.Attempts,
				n.At.Format(time.RFC3339), dash(n.Detail))
		}
		return w.Flush()
	case "audit":
		count := fs.Int("count", 100, "how many entries, 1 to 1000")
		if err := fs.Parse(rest); err != nil {
			return err
		}
		var out []struct {
			ID, Actor, Action, Target string
			At                        time.Time
			Change                    json.RawMessage
		}
		if err := c.do(ctx, http.MethodGet, "/admin/compatibility/audit?count="+strconv.Itoa(*count), nil, &out); err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "AT\tACTOR\tACTION\tTARGET\tCHANGE")
		for _, e := range out {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", e.At.Format(time.RFC3339), e.Actor, e.Action, e.Target, e.Change)
		}
		return w.Flush()
	}
	return fmt.Errorf("unknown compat command %q\n%s", cmd, compatUsage)
}

// do sends one request and decodes the answer's data into out; a problem
// answer becomes an error naming its code and detail.
func (c adminClient) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-PC-Actor", c.actor)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("calling the edge's admin API: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var p struct{ Code, Detail string }
		if json.Unmarshal(raw, &p) == nil && p.Code != "" {
			return fmt.Errorf("%d %s: %s", resp.StatusCode, p.Code, p.Detail)
		}
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	if out == nil {
		return nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	return json.Unmarshal(env.Data, out)
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
