// Command x402pay sends one HTTP request and pays for it with x402 version
// 2 when the server answers 402 Payment Required, like curl with a wallet.
// The answer's body goes to stdout (pretty JSON when it is JSON), a receipt
// of the payment to stderr.
//
//	x402pay -key HEX [-network eip155:84532] [-max 10000000] [-d @file.json | -d '{...}'] [-X POST] [-H 'K: V']... URL
//
// See the usage text (x402pay -h) for the flags and the development keys.
package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/x402client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "x402pay: %v\n", err)
		os.Exit(1)
	}
}

// envKey names the variable that holds the payer's key when -key is not
// given; a flag would leave the key in the shell history and in ps.
const envKey = "X402_PRIVATE_KEY"

const usage = `usage: x402pay [flags] URL

Sends one request to URL. When the answer is 402 Payment Required, pays the
first acceptable offer of its PAYMENT-REQUIRED challenge (scheme exact, USDC,
one of -network, at most -max) with one EIP-3009 signature and sends the
request again with PAYMENT-SIGNATURE. The body of the answer goes to stdout,
the receipt (offer paid, payer, settlement transaction, replayed or not) to
stderr. A refusal, by this client or by the server, exits 1 and prints the
server's answer on stderr.

The key is the payer's secp256k1 private key as hex, from -key or from
X402_PRIVATE_KEY. There is no default. For the local stack, make run funds
the public Anvil/Hardhat development accounts; account 0 is

  X402_PRIVATE_KEY=0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80

(payer 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266). That key is PUBLIC,
printed in every Anvil and Hardhat install: use it for local testing only and
never send real funds to its address.

Examples:
  export X402_PRIVATE_KEY=0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80
  x402pay -d @request.json http://localhost:8080/api/x402/dispute-readiness
  x402pay -network eip155:84532 -max 10000 -H 'X-Request-Id: demo-1' -d @request.json URL

Flags:
`

// options are the parsed command line.
type options struct {
	key      string
	networks string
	max      string
	data     string
	method   string
	headers  []string
	timeout  time.Duration
	url      string
}

func parseArgs(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("x402pay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.key, "key", "", "payer private key as hex (default $"+envKey+")")
	fs.StringVar(&o.networks, "network", strings.Join(x402client.DefaultNetworks(), ","), "networks to pay on, comma-separated, most preferred first")
	fs.StringVar(&o.max, "max", x402client.DefaultMaxAmount, "largest amount to pay, in atomic units (USDC has 6 decimals: 10000000 is 10 USDC)")
	fs.StringVar(&o.data, "d", "", "request body, or @FILE to read it from FILE; sets the method to POST and Content-Type to application/json unless given")
	fs.StringVar(&o.method, "X", "", "request method (default GET, or POST with -d)")
	fs.Func("H", "request header 'Name: value' (repeatable)", func(v string) error {
		o.headers = append(o.headers, v)
		return nil
	})
	fs.DurationVar(&o.timeout, "timeout", x402client.DefaultTimeout, "timeout of each HTTP request")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return options{}, errors.New("exactly one URL is required")
	}
	o.url = fs.Arg(0)
	return o, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	keyHex := o.key
	if keyHex == "" {
		keyHex = getenv(envKey)
	}
	if keyHex == "" {
		return fmt.Errorf("no payer key: pass -key or set %s (x402pay -h names the public development keys)", envKey)
	}
	key, err := parseKey(keyHex)
	if err != nil {
		return err
	}
	body, err := readData(o.data)
	if err != nil {
		return err
	}
	req, err := newRequest(ctx, o, body)
	if err != nil {
		return err
	}
	client, err := x402client.New(x402client.Config{
		Key:       key,
		HTTP:      &http.Client{Timeout: o.timeout},
		Networks:  splitList(o.networks),
		MaxAmount: o.max,
	})
	if err != nil {
		return err
	}

	res, err := client.Pay(ctx, req, body)
	if res != nil && res.Paid {
		writeReceipt(stderr, client, res)
	}
	if err != nil {
		if res != nil && res.Response != nil {
			writeAnswer(stderr, res)
		}
		return err
	}
	if res.Response.StatusCode/100 != 2 {
		writeAnswer(stderr, res)
		return fmt.Errorf("server answered %s", res.Response.Status)
	}
	if !res.Paid {
		fmt.Fprintf(stderr, "x402pay: %s answered %s without asking for payment\n", o.url, res.Response.Status)
	}
	_, err = stdout.Write(pretty(res.Body))
	return err
}

// parseKey reads a secp256k1 private key from hex, with or without 0x. Its
// errors never quote the key.
func parseKey(s string) (*ecdsa.PrivateKey, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "0x")
	key, err := crypto.HexToECDSA(s)
	if err != nil {
		return nil, errors.New("payer key is not a secp256k1 private key of 64 hex digits")
	}
	return key, nil
}

func readData(data string) ([]byte, error) {
	if path, ok := strings.CutPrefix(data, "@"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading -d: %w", err)
		}
		return b, nil
	}
	return []byte(data), nil
}

func newRequest(ctx context.Context, o options, body []byte) (*http.Request, error) {
	method := o.method
	if method == "" {
		method = http.MethodGet
		if o.data != "" {
			method = http.MethodPost
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, o.url, nil)
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return nil, fmt.Errorf("request: URL %q is not http or https", o.url)
	}
	for _, h := range o.headers {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("header %q is not 'Name: value'", h)
		}
		req.Header.Add(name, strings.TrimSpace(value))
	}
	if len(body) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	return req, nil
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// writeReceipt prints what was paid and what the server said about it.
func writeReceipt(w io.Writer, c *x402client.Client, res *x402client.Result) {
	offer := res.Payment.Accepted
	fmt.Fprintf(w, "x402pay: paid %s on %s\n", formatAmount(offer), offer.Network)
	fmt.Fprintf(w, "  asset        %s\n", offer.Asset)
	fmt.Fprintf(w, "  payTo        %s\n", offer.PayTo)
	fmt.Fprintf(w, "  payer        %s\n", c.Payer().Hex())
	if res.PaymentIdentifier != "" {
		fmt.Fprintf(w, "  payment id   %s\n", res.PaymentIdentifier)
	}
	switch s := res.Settlement; {
	case s == nil:
		fmt.Fprintf(w, "  settlement   none reported (no %s header)\n", x402.HeaderPaymentResponse)
	case s.Success:
		fmt.Fprintf(w, "  transaction  %s\n", s.Transaction)
	default:
		fmt.Fprintf(w, "  settlement   failed: %s %s\n", s.ErrorReason, s.ErrorMessage)
	}
	if res.Response == nil {
		fmt.Fprintf(w, "  answer       none: the payment was sent, but no answer came back\n")
		return
	}
	fmt.Fprintf(w, "  replayed     %s\n", replayed(res.Body))
	fmt.Fprintf(w, "  status       %s\n", res.Response.Status)
	if id := res.Response.Header.Get("X-Request-Id"); id != "" {
		fmt.Fprintf(w, "  request id   %s\n", id)
	}
}

// formatAmount shows the amount in whole USDC beside the atomic units.
func formatAmount(o x402.PaymentRequirements) string {
	asset, ok := x402.USDC(o.Network)
	n, okN := new(big.Int).SetString(o.Amount, 10)
	if !ok || !okN || n.Sign() < 0 {
		return o.Amount + " atomic units"
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(asset.Decimals)), nil)
	whole, frac := new(big.Int).QuoRem(n, unit, new(big.Int))
	return fmt.Sprintf("%d.%0*d USDC (%s atomic units)", whole, asset.Decimals, frac, o.Amount)
}

// replayed reads payment.replayed of the readiness report: whether the
// server answered from its store of paid requests rather than anew.
func replayed(body []byte) string {
	var report struct {
		Payment *struct {
			Replayed *bool `json:"replayed"`
		} `json:"payment"`
	}
	if json.Unmarshal(body, &report) != nil || report.Payment == nil || report.Payment.Replayed == nil {
		return "not reported"
	}
	if *report.Payment.Replayed {
		return "true (the server replayed its stored answer to this payment)"
	}
	return "false"
}

func writeAnswer(w io.Writer, res *x402client.Result) {
	fmt.Fprintf(w, "x402pay: the server answered %s:\n", res.Response.Status)
	_, _ = w.Write(pretty(res.Body))
}

// pretty indents a JSON body and leaves anything else as it is, ending it
// with a newline.
func pretty(body []byte) []byte {
	var buf bytes.Buffer
	if json.Indent(&buf, body, "", "  ") != nil {
		buf.Reset()
		buf.Write(body)
	}
	if buf.Len() > 0 && !bytes.HasSuffix(buf.Bytes(), []byte("\n")) {
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}
