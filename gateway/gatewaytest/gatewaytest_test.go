package gatewaytest_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/sandbox/sandboxtest"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// Serve puts the real gateway over gRPC in front of a sandbox: the Go client looks an account up,
// sends a transfer that settles, and the gateway's metrics are served.
func TestServeLookupTransferSettles(t *testing.T) {
	d := testkit.NewDB(t)
	sb := sandboxtest.Start(t, d.App, sandboxtest.Options{SettleDelay: 10 * time.Millisecond})
	gw := gatewaytest.Serve(t, d.App, sb.URL, gatewaytest.Options{})
	from, to := testkit.Unique("SRC"), testkit.Unique("DST")
	sb.Account(t, from, "Wagerail Funding", 10_000_00)
	sb.Account(t, to, "Almaz Tesfaye", 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	look, err := gw.Client.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: gateway.SandboxPartner, AccountId: to, ExpectedHolderName: "almaz  TESFAYE"})
	if err != nil || !look.GetExists() || look.GetNameMatch() != gatewayv1.NameMatch_NAME_MATCH_MATCH {
		t.Fatalf("lookup = %v, %v", look, err)
	}
	missing, err := gw.Client.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: gateway.SandboxPartner, AccountId: testkit.Unique("NONE")})
	if err != nil || missing.GetExists() {
		t.Fatalf("lookup of a missing account = %v, %v", missing, err)
	}
	ref := testkit.Unique("ref")
	resp, err := gw.Client.InitiateDisbursement(ctx, &gatewayv1.InitiateDisbursementRequest{Partner: gateway.SandboxPartner, Reference: ref,
		FromAccount: from, ToAccount: to, AmountSantim: 1234, TenantId: "t1", Domain: "EWA"})
	if err != nil || resp.GetOutcome() != gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED {
		t.Fatalf("initiate = %v, %v", resp, err)
	}
	tr := gw.WaitTransfer(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	if tr.GetAmountSantim() != 1234 || tr.GetId() != resp.GetTransfer().GetId() {
		t.Fatalf("settled transfer = %v", tr)
	}
	mr, err := http.Get(gw.MetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(mr.Body)
	mr.Body.Close()
	if !strings.Contains(string(body), "InitiateDisbursement") {
		t.Fatalf("gateway metrics do not show the call:\n%s", body)
	}
}

// Start is the sandbox and the gateway together; Stack's helpers reach both.
func TestStartStack(t *testing.T) {
	d := testkit.NewDB(t)
	s := gatewaytest.Start(t, d.App, gatewaytest.Options{})
	if s.Sandbox == nil || s.GW == nil || s.GW.Client == nil || s.GatewayAddr == "" || s.BankURL != s.Sandbox.URL {
		t.Fatalf("stack incomplete: %+v", s)
	}
	acct := testkit.Unique("ACC")
	s.Account(t, acct, "Abebe Kebede", 0)
	s.Fault(t, acct, map[string]any{"errorRatePercent": 100})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := s.GW.Client.LookupAccount(ctx, &gatewayv1.LookupAccountRequest{Partner: gateway.SandboxPartner, AccountId: acct})
	if err == nil {
		t.Fatal("lookup through a failing partner succeeded")
	}
	if r := gateway.ReasonOf(err); r != gateway.ReasonPartnerUnavail {
		t.Fatalf("reason = %q (%v), want %q", r, err, gateway.ReasonPartnerUnavail)
	}
}
