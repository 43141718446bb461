package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/money"
)

// rawObject renders a JSON object from raw JSON values in key order, so a probe can put bytes a
// JSON encoder would never write (invalid UTF-8, a raw NUL) into a field.
func rawObject(fields [][2]string, over map[string]string) string {
	var b strings.Builder
	b.WriteByte('{')
	seen := map[string]bool{}
	for i, kv := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		v := kv[1]
		if o, ok := over[kv[0]]; ok {
			v = o
		}
		seen[kv[0]] = true
		b.WriteString(`"` + kv[0] + `":` + v)
	}
	keys := make([]string, 0, len(over))
	for k := range over {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(`,"` + k + `":` + over[k]) // raw: a probe's key may hold any bytes
	}
	b.WriteByte('}')
	return b.String()
}

// The hostile-probe fixtures: HP-SRC can pay HP-DST, so a probe the bank wrongly accepted would
// write a transfer, which the test would see.
func transferJSON(over map[string]string) string {
	return rawObject([][2]string{{"reference", `"hp-ref"`}, {"fromAccount", `"HP-SRC"`}, {"toAccount", `"HP-DST"`},
		{"amountSantim", `100`}, {"currency", `"ETB"`}, {"tenantId", `"tenant-h"`}, {"domain", `"EWA"`}}, over)
}

func batchJSON(over map[string]string) string {
	return rawObject([][2]string{{"batchReference", `"hp-batch"`}, {"fromAccount", `"HP-SRC"`}, {"currency", `"ETB"`},
		{"tenantId", `"tenant-h"`}, {"domain", `"PAYROLL"`}, {"items", `[{"reference":"hp-item","toAccount":"HP-DST","amountSantim":100}]`}}, over)
}

func itemsWith(over map[string]string) string {
	return "[" + rawObject([][2]string{{"reference", `"hp-item"`}, {"toAccount", `"HP-DST"`}, {"amountSantim", `100`}}, over) + "]"
}

func accountBody(over map[string]string) string {
	return rawObject([][2]string{{"accountNumber", `"HP-NEW"`}, {"holderName", `"New Holder"`}}, over)
}

func identityBody(over map[string]string) string {
	return rawObject([][2]string{{"nationalId", `"HPID123456"`}, {"fullName", `"Hostile Probe"`}, {"dateOfBirth", `"1990-01-02"`}}, over)
}

// goWords are what the decoder's own messages say and the bank's must not: a caller learns the
// contract's field names and kinds, never the implementation's types.
var goWords = []string{"Go ", "struct", "int64", "unmarshal", "json:", "sandbox.", "reflect", "[]"}

func requireNoGoWords(t testing.TB, what string, body []byte) {
	t.Helper()
	var e errorBody
	if json.Unmarshal(body, &e) != nil {
		return
	}
	for _, w := range goWords {
		require.NotContains(t, e.Error.Message, w, "%s: message %q", what, e.Error.Message)
	}
}

type probe struct {
	class, name  string
	method, path string
	body         string
	status       int
	code         string
}

func hostileProbes(allowed string) []probe {
	const (
		bad  = 400
		inv  = CodeInvalidRequest
		tx   = "/api/v1/transfers"
		bt   = "/api/v1/transfer-batches"
		acct = "/api/v1/sandbox/accounts"
	)
	long := func(n int) string { return strings.Repeat("r", n) }
	var ps []probe
	add := func(class, name, method, path, body string, status int, code string) {
		ps = append(ps, probe{class, name, method, path, body, status, code})
	}
	tr := func(k, v string) string { return transferJSON(map[string]string{k: v}) }
	ba := func(k, v string) string { return batchJSON(map[string]string{k: v}) }

	// NUL, escaped (valid JSON that decodes to U+0000) and raw (invalid JSON), in every string
	// field of every body and in every path and query parameter.
	for _, k := range []string{"reference", "fromAccount", "toAccount", "currency", "tenantId", "domain", "callbackUrl"} {
		add("nul", "transfer "+k, "POST", tx, tr(k, `"a\u0000b"`), bad, inv)
	}
	add("nul", "transfer callbackUrl on allowlist+NUL", "POST", tx, tr("callbackUrl", strconv.Quote(allowed)[:len(strconv.Quote(allowed))-1]+`\u0000"`), bad, inv)
	add("nul", "transfer raw NUL byte", "POST", tx, tr("reference", "\"a\x00b\""), bad, inv)
	for _, k := range []string{"batchReference", "fromAccount", "tenantId", "currency", "domain", "callbackUrl"} {
		add("nul", "batch "+k, "POST", bt, ba(k, `"a\u0000b"`), bad, inv)
	}
	add("nul", "batch item reference", "POST", bt, ba("items", itemsWith(map[string]string{"reference": `"\u0000"`})), bad, inv)
	add("nul", "batch item toAccount", "POST", bt, ba("items", itemsWith(map[string]string{"toAccount": `"HP-DST\u0000"`})), bad, inv)
	add("nul", "account number", "POST", acct, accountBody(map[string]string{"accountNumber": `"HP\u0000X"`}), bad, inv)
	add("nul", "holder name", "POST", acct, accountBody(map[string]string{"holderName": `"Al\u0000maz"`}), bad, inv)
	add("nul", "account status", "POST", acct, accountBody(map[string]string{"status": `"ACTIVE\u0000"`}), bad, inv)
	add("nul", "fund reference", "POST", acct+"/HP-DST/fund", `{"amountSantim":1,"reference":"f\u0000"}`, bad, inv)
	add("nul", "fault rejectCode", "PUT", "/api/v1/sandbox/faults", `{"rejectCode":"X\u0000"}`, bad, inv)
	add("nul", "unknown key with NUL", "POST", tx, tr("x\u0000y", `1`), bad, inv)
	for _, p := range []string{
		"/api/v1/accounts/HP-SRC%00", "/api/v1/transfers/by-reference/r%00", "/api/v1/transfer-batches/by-reference/%00",
		"/api/v1/transfers/%00", "/api/v1/transfer-batches/%00", "/api/v1/sandbox/accounts/HP-SRC%00",
		"/api/v1/statements?account=HP-SRC%00", "/api/v1/sandbox/callbacks?transferId=%00",
		"/api/v1/sandbox/transfers?status=PENDING%00", "/api/v1/sandbox/transfers?limit=1%00",
	} {
		add("nul", "GET "+p, "GET", p, "", bad, inv)
	}
	add("nul", "close path", "POST", acct+"/HP-DST%00/close", "", bad, inv)
	add("nul", "fund path", "POST", acct+"/HP-DST%00/fund", `{"amountSantim":1}`, bad, inv)
	add("nul", "faults path", "PUT", "/api/v1/sandbox/faults/HP-DST%00", `{}`, bad, inv)
	add("nul", "faults delete path", "DELETE", "/api/v1/sandbox/faults/HP-DST%00", "", bad, inv)

	// Other control characters: C0, DEL, C1, bidirectional overrides, line breaks.
	for _, c := range []string{`\u0001`, `\u001b`, `\u001f`, `\u007f`, `\u0085`, `\u009b`, `\u202e`, `\u2066`, `\n`, `\t`, `\r`} {
		add("control", "transfer reference "+c, "POST", tx, tr("reference", `"a`+c+`b"`), bad, inv)
		add("control", "holder name "+c, "POST", acct, accountBody(map[string]string{"holderName": `"Al` + c + `maz"`}), bad, inv)
	}
	add("control", "tenantId ESC", "POST", tx, tr("tenantId", `"t\u001b[31m"`), bad, inv)
	add("control", "batch item reference DEL", "POST", bt, ba("items", itemsWith(map[string]string{"reference": `"i\u007f"`})), bad, inv)
	add("control", "callbackUrl newline", "POST", tx, tr("callbackUrl", strconv.Quote(allowed+"\n")), bad, inv)
	for _, p := range []string{"/api/v1/accounts/HP%0ASRC", "/api/v1/transfers/by-reference/r%1B", "/api/v1/transfer-batches/by-reference/b%7F",
		"/api/v1/statements?account=HP%09SRC", "/api/v1/transfers/by-reference/%E2%80%AEr"} {
		add("control", "GET "+p, "GET", p, "", bad, inv)
	}

	// Invalid UTF-8: raw bytes in the body (refused before decoding) and escaped in paths.
	for _, seq := range []string{"\xff", "\xc3\x28", "\xed\xa0\x80", "\xf0\x28\x8c\x28", "\xc0\xaf"} {
		add("utf8", fmt.Sprintf("transfer reference %q", seq), "POST", tx, tr("reference", `"r`+seq+`"`), bad, inv)
		add("utf8", fmt.Sprintf("holder name %q", seq), "POST", acct, accountBody(map[string]string{"holderName": `"A` + seq + `"`}), bad, inv)
	}
	add("utf8", "batch tenantId", "POST", bt, ba("tenantId", "\"t\xff\""), bad, inv)
	add("utf8", "unknown key", "POST", tx, tr("\xff", `1`), bad, inv)
	add("utf8", "fund reference", "POST", acct+"/HP-DST/fund", "{\"amountSantim\":1,\"reference\":\"\xfe\"}", bad, inv)
	add("utf8", "faults body", "PUT", "/api/v1/sandbox/faults", "{\"rejectCode\":\"\xff\"}", bad, inv)
	add("utf8", "escaped U+FFFD", "POST", tx, tr("reference", `"r\ufffd"`), bad, inv)
	add("utf8", "lone surrogate escape", "POST", tx, tr("reference", `"r\ud800"`), bad, inv)
	for _, p := range []string{"/api/v1/accounts/%FF", "/api/v1/transfers/by-reference/%C3%28", "/api/v1/transfer-batches/by-reference/%ED%A0%80",
		"/api/v1/statements?account=%C3%28", "/api/v1/sandbox/accounts/%FF/close"} {
		method := "GET"
		if strings.HasSuffix(p, "/close") {
			method = "POST"
		}
		add("utf8", method+" "+p, method, p, "", bad, inv)
	}

	// Unicode noncharacters: encoding/xml writes them as U+FFFD, so a camt.053 statement carrying
	// one would be mangled and refused whole by its reader.
	for _, c := range []string{`\uffff`, `\ufffe`, `\ufdd0`, `\ud83f\udffe`} {
		add("nonchar", "transfer reference "+c, "POST", tx, tr("reference", `"R`+c+`1"`), bad, inv)
		add("nonchar", "holder name "+c, "POST", acct, accountBody(map[string]string{"holderName": `"Al` + c + `maz"`}), bad, inv)
	}
	add("nonchar", "batch reference", "POST", bt, ba("batchReference", `"b\uffff"`), bad, inv)
	add("nonchar", "batch item reference", "POST", bt, ba("items", itemsWith(map[string]string{"reference": `"i\ufffe"`})), bad, inv)
	add("nonchar", "fund reference", "POST", acct+"/HP-DST/fund", `{"amountSantim":1,"reference":"f\uffff"}`, bad, inv)
	add("nonchar", "raw U+FFFF in the body", "POST", tx, tr("reference", "\"R\uffff1\""), bad, inv)

	// Dot segments: a reference is looked up in a path, where "." and ".." are directions.
	for _, d := range []string{".", ".."} {
		add("dotseg", "transfer reference "+d, "POST", tx, tr("reference", strconv.Quote(d)), bad, inv)
		add("dotseg", "batch reference "+d, "POST", bt, ba("batchReference", strconv.Quote(d)), bad, inv)
		add("dotseg", "batch item reference "+d, "POST", bt, ba("items", itemsWith(map[string]string{"reference": strconv.Quote(d)})), bad, inv)
	}

	// Oversized strings: one byte over each bound, and far over.
	add("oversize", "reference 141", "POST", tx, tr("reference", strconv.Quote(long(141))), bad, inv)
	add("oversize", "reference 100k", "POST", tx, tr("reference", strconv.Quote(long(60_000))), bad, inv)
	add("oversize", "fromAccount 65", "POST", tx, tr("fromAccount", strconv.Quote(long(65))), bad, inv)
	add("oversize", "tenantId 129", "POST", tx, tr("tenantId", strconv.Quote(long(129))), bad, inv)
	add("oversize", "callbackUrl 2 kB", "POST", tx, tr("callbackUrl", strconv.Quote(allowed+"?"+long(2000))), bad, inv)
	add("oversize", "batchReference 141", "POST", bt, ba("batchReference", strconv.Quote(long(141))), bad, inv)
	add("oversize", "item reference 141", "POST", bt, ba("items", itemsWith(map[string]string{"reference": strconv.Quote(long(141))})), bad, inv)
	add("oversize", "holder name 141", "POST", acct, accountBody(map[string]string{"holderName": strconv.Quote(long(141))}), bad, inv)
	add("oversize", "holder name 47 Ethiopic letters (141 bytes)", "POST", acct, accountBody(map[string]string{"holderName": `"` + strings.Repeat("አ", 47) + `"`}), bad, inv)
	add("oversize", "account number 65", "POST", acct, accountBody(map[string]string{"accountNumber": strconv.Quote(long(65))}), bad, inv)
	add("oversize", "fund reference 141", "POST", acct+"/HP-DST/fund", `{"amountSantim":1,"reference":`+strconv.Quote(long(141))+`}`, bad, inv)
	add("oversize", "path reference 141", "GET", "/api/v1/transfers/by-reference/"+long(141), "", bad, inv)
	add("oversize", "path account 65", "GET", "/api/v1/accounts/"+long(65), "", bad, inv)
	add("oversize", "query account 65", "GET", "/api/v1/statements?account="+long(65), "", bad, inv)
	add("oversize", "transfer body over 64 KiB", "POST", tx, tr("reference", strconv.Quote(long(70_000))), 413, CodeBodyTooLarge)
	add("oversize", "account body over 64 KiB", "POST", acct, accountBody(map[string]string{"holderName": strconv.Quote(long(70_000))}), 413, CodeBodyTooLarge)
	add("oversize", "faults body over 64 KiB", "PUT", "/api/v1/sandbox/faults", `{"rejectCode":`+strconv.Quote(long(70_000))+`}`, 413, CodeBodyTooLarge)
	add("oversize", "GET with a body over 64 KiB", "GET", "/api/v1/accounts/HP-SRC", long(70_000), 413, CodeBodyTooLarge)

	// Amounts at and past the bounds, and numbers that are not int64 santim.
	for _, a := range []struct {
		name, raw string
	}{
		{"0", "0"}, {"-1", "-1"}, {"MaxInt64", strconv.FormatInt(math.MaxInt64, 10)}, {"MinInt64", strconv.FormatInt(math.MinInt64, 10)},
		{"Max+1", strconv.FormatInt(money.MaxAmountSantim+1, 10)}, {"2^64", "18446744073709551616"}, {"1e30", "1e30"},
		{"10.5", "10.5"}, {"1e3", "1e3"}, {"-0", "-0"}, {"string", `"10"`}, {"bool", "true"}, {"null", "null"}, {"object", "{}"},
	} {
		add("amount", "transfer "+a.name, "POST", tx, tr("amountSantim", a.raw), bad, inv)
		add("amount", "batch item "+a.name, "POST", bt, ba("items", itemsWith(map[string]string{"amountSantim": a.raw})), bad, inv)
		add("amount", "fund "+a.name, "POST", acct+"/HP-DST/fund", `{"amountSantim":`+a.raw+`}`, bad, inv)
	}
	add("amount", "opening balance -1", "POST", acct, accountBody(map[string]string{"balanceSantim": "-1"}), bad, inv)
	add("amount", "opening balance MaxInt64", "POST", acct, accountBody(map[string]string{"balanceSantim": strconv.FormatInt(math.MaxInt64, 10)}), bad, inv)
	add("amount", "opening balance over the account bound", "POST", acct, accountBody(map[string]string{"balanceSantim": strconv.FormatInt(money.MaxAccountTotalSantim+1, 10)}), bad, inv)
	add("amount", "transfer at the bound, not covered", "POST", tx, tr("amountSantim", strconv.FormatInt(money.MaxAmountSantim, 10)), 422, CodeInsufficientFunds)
	add("amount", "funding past the account bound", "POST", acct+"/HP-BIG/fund", `{"amountSantim":1}`, 422, CodeBalanceLimit)
	add("amount", "funding a closed account", "POST", acct+"/HP-CLOSED/fund", `{"amountSantim":1}`, 422, CodeAccountClosed)
	add("amount", "fault latency 1e400", "PUT", "/api/v1/sandbox/faults", `{"latencyMs":1e400}`, bad, inv)
	add("amount", "fault latency MaxInt64", "PUT", "/api/v1/sandbox/faults", `{"latencyMs":`+strconv.FormatInt(math.MaxInt64, 10)+`}`, bad, inv)
	add("amount", "fault error rate -1", "PUT", "/api/v1/sandbox/faults", `{"errorRatePercent":-1}`, bad, inv)

	// Malformed ids in paths and queries.
	for _, p := range []string{
		"/api/v1/transfers/not-a-uuid", "/api/v1/transfers/1", "/api/v1/transfers/00000000-0000-4000-8000-00000000000g",
		"/api/v1/transfers/00000000-0000-4000-8000-0000000000000", "/api/v1/transfers/'%20OR%201=1--",
		"/api/v1/transfer-batches/x", "/api/v1/transfer-batches/%7B%7D",
		"/api/v1/accounts/HP.SRC", "/api/v1/accounts/HP:SRC", "/api/v1/accounts/HP%20SRC", "/api/v1/accounts/HP%2FSRC",
		"/api/v1/transfers/by-reference/has%20space", "/api/v1/sandbox/accounts/a'b",
		"/api/v1/statements", "/api/v1/statements?account=", "/api/v1/statements?account=HP-SRC&from=2024-13-01",
		"/api/v1/statements?account=HP-SRC&from=yesterday", "/api/v1/statements?account=HP-SRC&to=1969-12-31",
		"/api/v1/statements?account=HP-SRC&format=pdf", "/api/v1/statements?account=HP-SRC&from=2025-01-02&to=2025-01-01",
		"/api/v1/sandbox/callbacks?transferId=x", "/api/v1/sandbox/callbacks?limit=0", "/api/v1/sandbox/transfers?limit=-1",
		"/api/v1/sandbox/transfers?limit=abc", "/api/v1/sandbox/transfers?limit=99999999999999999999",
		"/api/v1/sandbox/transfers?limit=10001", "/api/v1/sandbox/transfers?status=pending",
	} {
		add("id", "GET "+p, "GET", p, "", bad, inv)
	}
	add("id", "DELETE faults all=maybe", "DELETE", "/api/v1/sandbox/faults?all=maybe", "", bad, inv)
	add("id", "statement from year 0 reads from the epoch", "GET", "/api/v1/statements?account=HP-SRC&from=0000-01-01&to=1970-04-03", "", 200, "")
	add("id", "statement from year 0 to today is too long", "GET", "/api/v1/statements?account=HP-SRC&from=0000-01-01", "", bad, inv)
	add("id", "statement of 93 days and one", "GET", "/api/v1/statements?account=HP-SRC&from=2025-01-01&to=2025-04-04", "", bad, inv)
	add("id", "statement of 50 years", "GET", "/api/v1/statements?account=HP-SRC&from=1975-01-01&to=2025-01-01&format=camt053", "", bad, inv)
	add("id", "statement of an unknown account", "GET", "/api/v1/statements?account=HP-NOPE", "", 404, CodeAccountNotFound)
	add("id", "unknown route", "GET", "/api/v1/nope%00", "", 404, CodeNotFound)
	add("id", "unknown method", "PATCH", tx, "", 404, CodeNotFound)

	// Malformed JSON and JSON of the wrong kind: the answer names the field and the kind.
	for _, b := range []struct{ name, path, body string }{
		{"empty", tx, ""}, {"null", tx, "null"}, {"array", tx, "[]"}, {"string", tx, `"x"`}, {"number", tx, "1"},
		{"truncated", tx, `{"reference":"r"`}, {"syntax", tx, `{"reference":}`}, {"two objects", tx, transferJSON(nil) + "{}"},
		{"trailing brace", tx, transferJSON(nil) + "}"}, {"trailing bracket", tx, transferJSON(nil) + "]"},
		{"unknown field", tx, tr("fee", "1")}, {"case-folded unknown", tx, tr("Fee", "1")},
		{"reference number", tx, tr("reference", "1")}, {"reference object", tx, tr("reference", "{}")},
		{"fromAccount array", tx, tr("fromAccount", `["HP-SRC"]`)}, {"domain bool", tx, tr("domain", "true")},
		{"items object", bt, ba("items", "{}")}, {"items strings", bt, ba("items", `["a"]`)}, {"items null", bt, ba("items", "null")},
		{"items empty", bt, ba("items", "[]")}, {"item unknown field", bt, ba("items", itemsWith(map[string]string{"iban": `"x"`}))},
		{"deep nesting", tx, `{"reference":` + strings.Repeat("[", 20_000)},
		{"account balance string", acct, accountBody(map[string]string{"balanceSantim": `"1"`})},
		{"faults latency string", "/api/v1/sandbox/faults", `{"latencyMs":"1"}`}, {"faults flag string", "/api/v1/sandbox/faults", `{"dropCallback":"yes"}`},
	} {
		method := "POST"
		if strings.Contains(b.path, "faults") {
			method = "PUT"
		}
		add("json", b.name, method, b.path, b.body, bad, inv)
	}

	// Callback URLs the bank was not started to call.
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:5432/", "http://localhost/admin", "https://evil.example/cb",
		allowed + "?x=1", allowed + "/", strings.ToUpper(allowed[:4]) + allowed[4:], "http://[::1]:8080/api/integration/bank-callback/sandbox",
	} {
		add("callback", "transfer "+u, "POST", tx, tr("callbackUrl", strconv.Quote(u)), bad, CodeCallbackURLNotAllowed)
		add("callback", "batch "+u, "POST", bt, ba("callbackUrl", strconv.Quote(u)), bad, CodeCallbackURLNotAllowed)
	}
	for _, u := range []string{"ftp://x/cb", "file:///etc/passwd", "gopher://127.0.0.1:6379/_", "//evil.example/cb", "http://user:pw@evil.example/cb", allowed + "#frag"} {
		add("callback", "transfer "+u, "POST", tx, tr("callbackUrl", strconv.Quote(u)), bad, inv)
	}
	identityProbes(add)
	return ps
}

// identityProbes are the hostile inputs of the national ID registry's routes: the lookup's path
// and the operator's new identity. Every one is refused and registers nothing.
func identityProbes(add func(class, name, method, path, body string, status int, code string)) {
	const (
		bad = 400
		inv = CodeInvalidRequest
		ids = "/api/v1/sandbox/identities"
		get = "/api/v1/identities/"
	)
	id := func(k, v string) string { return identityBody(map[string]string{k: v}) }
	for _, k := range []string{"nationalId", "fullName", "dateOfBirth", "status"} {
		add("nul", "identity "+k, "POST", ids, id(k, `"A\u0000B"`), bad, inv)
		add("utf8", "identity raw "+k, "POST", ids, id(k, "\"A\xffB\""), bad, inv)
	}
	for _, c := range []string{`\u0001`, `\u001b`, `\u007f`, `\u0085`, `\u202e`, `\u200b`, `\ufeff`, `\n`, `\t`} {
		add("control", "identity fullName "+c, "POST", ids, id("fullName", `"Abebe`+c+`Kebede"`), bad, inv)
	}
	add("utf8", "identity fullName escaped U+FFFD", "POST", ids, id("fullName", `"Abebe\ufffd"`), bad, inv)
	add("nonchar", "identity fullName U+FFFF", "POST", ids, id("fullName", `"Abebe\uffff"`), bad, inv)
	add("oversize", "identity fullName 257 bytes", "POST", ids, id("fullName", strconv.Quote(strings.Repeat("n", 257))), bad, inv)
	add("oversize", "identity nationalId 33", "POST", ids, id("nationalId", strconv.Quote(strings.Repeat("A", 33))), bad, inv)
	add("oversize", "identity body over 64 KiB", "POST", ids, id("fullName", strconv.Quote(strings.Repeat("n", 70_000))), 413, CodeBodyTooLarge)
	add("oversize", "identity lookup id 33", "GET", get+strings.Repeat("A", 33), "", bad, inv)
	for _, v := range []string{`""`, `"hpid123456"`, `"HPID1"`, `"HP-123456"`, `"HP 123456"`, `"HP.123456"`, `"."`, `".."`, `"ÄBC12345"`, `123456`, `null`} {
		add("id", "identity nationalId "+v, "POST", ids, id("nationalId", v), bad, inv)
	}
	for _, v := range []string{`""`, `"   "`, `1`, `null`} {
		add("json", "identity fullName "+v, "POST", ids, id("fullName", v), bad, inv)
	}
	for _, v := range []string{`""`, `"1990-02-30"`, `"1991-02-29"`, `"1990-13-01"`, `"19900102"`, `"1990-1-2"`, `"02-01-1990"`,
		`"1990-01-02T00:00:00Z"`, `" 1990-01-02"`, `"1899-12-31"`, `"0000-01-01"`, `"9999-12-31"`, `19900102`, `null`} {
		add("date", "identity dateOfBirth "+v, "POST", ids, id("dateOfBirth", v), bad, inv)
	}
	for _, v := range []string{`"active"`, `"CLOSED"`, `"ACTIVE "`, `1`} {
		add("id", "identity status "+v, "POST", ids, id("status", v), bad, inv)
	}
	add("json", "identity unknown field", "POST", ids, id("photo", `"x"`), bad, inv)
	add("json", "identity array", "POST", ids, "[]", bad, inv)
	add("json", "identity empty body", "POST", ids, "", bad, inv)
	add("json", "identity two objects", "POST", ids, identityBody(nil)+"{}", bad, inv)
	for _, p := range []string{"hpid123456", "HPID1", "HP%20123456", "HP-123456", "HP.123456", "HPID123456%00", "HPID123456%0A",
		"%FF%FE123456", "%E2%80%AEHPID123456", "HPID123456%2F..", "%C3%84BC12345"} {
		add("id", "GET identity "+p, "GET", get+p, "", bad, inv)
		add("id", "revoke identity "+p, "POST", ids+"/"+p+"/revoke", "", bad, inv)
	}
	add("id", "revoke unknown identity", "POST", ids+"/HPID999999/revoke", "", 404, CodeIdentityNotFound)
	add("id", "lookup unknown identity", "GET", get+"HPID999999", "", 404, CodeIdentityNotFound)
}

// TestHardening4_HostileProbesAreRefusedBeforeTheDatabase sends every class of hostile input to
// every route: each is refused with its status and stable code (never a 5xx), no message names
// a Go type, and nothing is written.
func TestHardening4_HostileProbesAreRefusedBeforeTheDatabase(t *testing.T) {
	t.Parallel()
	allowed := "http://127.0.0.1:8080/api/integration/bank-callback/sandbox"
	e := newEnv(t, func(c *Config) { c.CallbackAllowlist = []string{allowed} })
	e.openAccount("HP-SRC", "Source", 1_000_000)
	e.openAccount("HP-DST", "Destination", 0)
	e.openAccount("HP-CLOSED", "Closed", 0)
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/accounts/HP-CLOSED/close", nil).Status)
	require.Equal(t, 201, e.do("POST", "/api/v1/sandbox/accounts", CreateAccountRequest{AccountNumber: "HP-BIG", HolderName: "Big",
		BalanceSantim: money.MaxAccountTotalSantim}).Status)

	probes := hostileProbes(allowed)
	counts := map[string]int{}
	for _, p := range probes {
		r := e.send(t, p.method, p.path, []byte(p.body))
		what := p.class + ": " + p.name
		require.Less(t, r.Status, 500, "%s: %s", what, r.Body)
		require.Equal(t, p.status, r.Status, "%s: %s", what, r.Body)
		if p.code != "" {
			require.Equal(t, p.code, r.errCode(), what)
			var env errorBody
			require.NoError(t, json.Unmarshal(r.Body, &env), what)
			require.NotEmpty(t, env.Error.Message, what)
		}
		requireNoGoWords(t, what, r.Body)
		counts[p.class]++
	}
	classes := make([]string, 0, len(counts))
	for c := range counts {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		t.Logf("hostile probes %-8s %3d, each answered with its expected status and code", c, counts[c])
	}
	t.Logf("hostile probes total    %3d", len(probes))

	require.Zero(t, e.count(`SELECT count(*) FROM sandbox.transfers`), "no transfer written")
	require.Zero(t, e.count(`SELECT count(*) FROM sandbox.batches`))
	require.Zero(t, e.count(`SELECT count(*) FROM sandbox.callbacks`))
	require.Zero(t, e.count(`SELECT count(*) FROM sandbox.faults`))
	require.Zero(t, e.count(`SELECT count(*) FROM sandbox.statement_lines WHERE kind <> 'OPENING'`), "no funding, no hold")
	require.Equal(t, 4, e.count(`SELECT count(*) FROM sandbox.accounts`), "no account opened")
	require.Zero(t, e.count(`SELECT count(*) FROM sandbox.identities`), "no identity registered")
	require.Equal(t, AccountActive, decodeAs[OperatorAccount](t, e.do("GET", "/api/v1/sandbox/accounts/HP-DST", nil)).Status, "no account closed")
	e.checkBooks()
}

// send makes one request from raw bytes, without following redirects.
func (e *env) send(t testing.TB, method, path string, body []byte) resp {
	t.Helper()
	r, err := e.trySend(method, path, body)
	require.NoError(t, err, "%s %s", method, path)
	return r
}

func (e *env) trySend(method, path string, body []byte) (resp, error) {
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		return resp{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := noRedirects.Do(req)
	if err != nil {
		return resp{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return resp{}, err
	}
	return resp{Status: res.StatusCode, Body: raw, Header: res.Header}, nil
}

var noRedirects = &http.Client{Timeout: 30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestHardening6_IdenticalBatchesRacingGetOneAnswer races identical batch requests: every caller
// gets the same successful answer and exactly one batch is booked, round after round; the same
// reference with another body stays a conflict, racing or not.
func TestHardening6_IdenticalBatchesRacingGetOneAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("RB-SRC", "Employer", 10_000_000)
	e.openAccount("RB-A", "Worker A", 0)
	e.openAccount("RB-B", "Worker B", 0)
	const callers, rounds = 20, 5
	var held int64
	batch := func(amount int64) BatchRequest {
		bref := ref("race")
		return BatchRequest{BatchReference: bref, FromAccount: "RB-SRC", Currency: "ETB", TenantID: "tenant-r", Domain: "PAYROLL",
			Items: []BatchItemRequest{
				{Reference: bref + "-1", ToAccount: "RB-A", AmountSantim: amount},
				{Reference: bref + "-2", ToAccount: "RB-B", AmountSantim: amount + 1},
				{Reference: bref + "-3", ToAccount: "RB-GHOST", AmountSantim: 5}, // failed at acceptance, with a callback
			}}
	}
	for round := range rounds {
		req := batch(int64(100 + round))
		bodies := make([]BatchRequest, callers)
		for i := range bodies {
			bodies[i] = req
		}
		results := postAtOnce(e, "/api/v1/transfer-batches", bodies)
		var first *Batch
		created := 0
		for i, r := range results {
			require.Contains(t, []int{200, 201}, r.Status, "round %d caller %d: %s", round, i, r.Body)
			if r.Status == 201 {
				created++
			}
			b := decodeAs[Batch](t, r)
			if first == nil {
				first = &b
				continue
			}
			require.Equal(t, first.ID, b.ID, "round %d: every caller sees the same batch", round)
			require.Equal(t, first.Items, b.Items, "round %d: and the same items", round)
			require.Equal(t, first.TotalSantim, b.TotalSantim)
		}
		require.Equal(t, 1, created, "round %d: exactly one caller created it", round)
		require.Equal(t, 1, e.count(`SELECT count(*) FROM sandbox.batches WHERE batch_reference = $1`, req.BatchReference))
		require.Equal(t, 3, e.count(`SELECT count(*) FROM sandbox.transfers WHERE batch_id = $1::uuid`, first.ID))
		require.Equal(t, 2, e.count(`SELECT count(*) FROM sandbox.statement_lines l JOIN sandbox.transfers t ON t.id = l.transfer_id
			WHERE t.batch_id = $1::uuid AND l.kind = 'HOLD'`, first.ID), "round %d: held once", round)
		held += req.Items[0].AmountSantim + req.Items[1].AmountSantim
		require.Equal(t, 10_000_000-held, e.balance("RB-SRC"))
	}

	// Same reference, other body: a conflict after the fact …
	req := batch(1_000)
	require.Equal(t, 201, e.do("POST", "/api/v1/transfer-batches", req).Status)
	held += 2_001
	other := req
	other.Items = append([]BatchItemRequest(nil), req.Items...)
	other.Items[0].AmountSantim++
	r := e.do("POST", "/api/v1/transfer-batches", other)
	require.Equal(t, 409, r.Status, "%s", r.Body)
	require.Equal(t, CodeReferenceConflict, r.errCode())

	// … and while racing: whichever body is booked first, its callers replay it, the others get 409.
	req = batch(2_000)
	other = req
	other.Items = append([]BatchItemRequest(nil), req.Items...)
	other.Items[1].AmountSantim++
	bodies := make([]BatchRequest, callers)
	for i := range bodies {
		bodies[i] = req
		if i%2 == 1 {
			bodies[i] = other
		}
	}
	results := postAtOnce(e, "/api/v1/transfer-batches", bodies)
	winner := -1
	for i, r := range results {
		if r.Status == 201 {
			require.Equal(t, -1, winner, "two batches created")
			winner = i % 2
		}
	}
	require.NotEqual(t, -1, winner)
	for i, r := range results {
		if i%2 == winner {
			require.Contains(t, []int{200, 201}, r.Status, "%s", r.Body)
		} else {
			require.Equal(t, 409, r.Status, "%s", r.Body)
			require.Equal(t, CodeReferenceConflict, r.errCode())
		}
	}
	won := bodies[winner]
	held += won.Items[0].AmountSantim + won.Items[1].AmountSantim
	require.Equal(t, 1, e.count(`SELECT count(*) FROM sandbox.batches WHERE batch_reference = $1`, req.BatchReference))
	require.Equal(t, rounds+2, e.count(`SELECT count(*) FROM sandbox.batches`))
	require.Equal(t, 3*(rounds+2), e.count(`SELECT count(*) FROM sandbox.transfers`))
	require.Equal(t, 10_000_000-held, e.balance("RB-SRC"))
	e.checkBooks()
}

// slowConn dials the bank and trickles data one byte at a time until the bank hangs up; it
// reports whether the bank closed the connection (rather than the test giving up).
func slowConn(t *testing.T, addr, head string, filler byte) (closedByBank bool, answer string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; ; i++ {
			b := filler
			if i < len(head) {
				b = head[i]
			}
			if _, err := conn.Write([]byte{b}); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	// Trickled at this pace, the request would need minutes; the bank's timeouts are a fraction
	// of a second, and the test waits far longer than that before calling it a failure.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
	got, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false, string(got)
	}
	return true, string(got)
}

// TestHardening8_SlowClientsAreCutOff: a client trickling its header, or its body, is
// disconnected by the bank's read timeouts.
func TestHardening8_SlowClientsAreCutOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) {
		c.ReadHeaderTimeout = 300 * time.Millisecond
		c.ReadTimeout = 600 * time.Millisecond
	})
	addr := e.srv.Listener.Addr().String()

	closed, _ := slowConn(t, addr, "GET /healthz HTTP/1.1\r\nHost: bank\r\nX-Slow: ", 'a')
	require.True(t, closed, "a header sent byte by byte is cut off")

	closed, answer := slowConn(t, addr, "POST /api/v1/transfers HTTP/1.1\r\nHost: bank\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n", ' ')
	require.True(t, closed, "a body sent byte by byte is cut off")
	if answer != "" {
		require.Contains(t, answer, " 400 ", "if the bank answers at all, it is the caller's error: %q", answer)
	}

	// A well-behaved client is served on the same server.
	require.Equal(t, 200, e.do("GET", "/healthz", nil).Status)
}

// TestHardening8_OversizedBodiesAre413 sends every route a body one byte over its bound, with and
// without a declared length.
func TestHardening8_OversizedBodiesAre413(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("OB-SRC", "Source", 1_000)
	fill := map[string]string{"{account}": "OB-SRC", "{id}": "00000000-0000-4000-8000-000000000000",
		"{reference...}": "ref-1", "{nationalId}": "OB1234567"}
	n := 0
	for _, rt := range e.bank.routes() {
		method, path, ok := strings.Cut(rt.pattern, " ")
		if !ok {
			method, path = "POST", "/no-such-route"
		}
		for k, v := range fill {
			path = strings.ReplaceAll(path, k, v)
		}
		over := bytes.Repeat([]byte{' '}, int(rt.maxBody)+1)
		r := e.send(t, method, path, over)
		require.Equal(t, 413, r.Status, "%s %s: %s", method, path, r.Body)
		require.Equal(t, CodeBodyTooLarge, r.errCode(), rt.pattern)
		n++

		// Chunked, no declared length: refused as the reader crosses the bound, on every route
		// that reads a body.
		if method == "POST" || method == "PUT" {
			req, err := http.NewRequest(method, e.srv.URL+path, io.MultiReader(bytes.NewReader([]byte(`{"reference":"`)), bytes.NewReader(over)))
			require.NoError(t, err)
			req.ContentLength = -1
			res, err := noRedirects.Do(req)
			require.NoError(t, err)
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if reads := !strings.HasSuffix(path, "/close") && !strings.HasSuffix(path, "/revoke") && path != "/no-such-route"; reads {
				require.Equal(t, 413, res.StatusCode, "chunked %s %s: %s", method, path, raw)
			} else {
				require.Less(t, res.StatusCode, 500, "chunked %s %s: %s", method, path, raw)
			}
		}
	}
	require.Equal(t, len(e.bank.routes()), n)
	require.Zero(t, e.count(`SELECT count(*) FROM sandbox.transfers`))
}

// TestHardening8_InjectedLatencyOutlastsWriteTimeout: the write timeout cuts off the bank's own
// slowness, not the latency an operator injected on purpose.
func TestHardening8_InjectedLatencyOutlastsWriteTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.WriteTimeout = time.Second })
	e.openAccount("WT-SRC", "Source", 1_000)
	e.openAccount("WT-DST", "Destination", 0)
	e.setFaults("WT-SRC", Faults{LatencyMs: 1_500, ExecuteThenTimeoutMs: 1_500})
	r := e.do("POST", "/api/v1/transfers", e.transfer(ref("wt"), "WT-SRC", "WT-DST", 10))
	require.Equal(t, 201, r.Status, "%s", r.Body)
	require.Equal(t, "WT-SRC", decodeAs[Transfer](t, r).FromAccount)
}

// TestHardening9_CallbackURLMustBeOnTheAllowlist: a request can only name a callback URL the
// bank was started with; nothing is booked for one that is not, and a stored URL that is not (or
// no longer) on the list is never called.
func TestHardening9_CallbackURLMustBeOnTheAllowlist(t *testing.T) {
	t.Parallel()
	listed := newReceiver(t, testSecret)
	rogue := newReceiver(t, testSecret)
	e := newEnv(t, func(c *Config) { c.CallbackAllowlist = []string{listed.URL + "/hook"} })
	e.openAccount("CA-SRC", "Source", 10_000)
	e.openAccount("CA-DST", "Destination", 0)

	for _, u := range []string{rogue.URL + "/hook", listed.URL + "/hook/", listed.URL + "/hook?x=1", listed.URL + "/HOOK",
		"http://169.254.169.254/latest/meta-data/"} {
		req := e.transfer(ref("ca"), "CA-SRC", "CA-DST", 100)
		req.CallbackURL = u
		r := e.do("POST", "/api/v1/transfers", req)
		require.Equal(t, 400, r.Status, "%s: %s", u, r.Body)
		require.Equal(t, CodeCallbackURLNotAllowed, r.errCode(), u)
		b := BatchRequest{BatchReference: ref("ca"), FromAccount: "CA-SRC", Currency: "ETB", TenantID: "t", Domain: "PAYROLL",
			CallbackURL: u, Items: []BatchItemRequest{{Reference: ref("ca"), ToAccount: "CA-DST", AmountSantim: 1}}}
		r = e.do("POST", "/api/v1/transfer-batches", b)
		require.Equal(t, 400, r.Status, "%s: %s", u, r.Body)
		require.Equal(t, CodeCallbackURLNotAllowed, r.errCode(), u)
	}
	require.Zero(t, e.count(`SELECT count(*) FROM sandbox.transfers`), "no transfer for a refused callback URL")
	require.Zero(t, e.count(`SELECT count(*) FROM sandbox.batches`))
	require.Equal(t, int64(10_000), e.balance("CA-SRC"))

	// On the list: the listed URL, and the default callback URL named explicitly.
	onList := e.transfer(ref("ca"), "CA-SRC", "CA-DST", 100)
	onList.CallbackURL = listed.URL + "/hook"
	t1 := e.create(onList)
	byDefault := e.transfer(ref("ca"), "CA-SRC", "CA-DST", 200)
	byDefault.CallbackURL = e.bank.cfg.CallbackURL
	t2 := e.create(byDefault)
	// A row that names a URL off the list (written before the list, or under a wider one).
	stale := e.create(e.transfer(ref("ca"), "CA-SRC", "CA-DST", 300))
	_, err := e.db.App.Exec(t.Context(), `UPDATE sandbox.transfers SET callback_url = $2 WHERE id = $1::uuid`, stale.ID, rogue.URL+"/hook")
	require.NoError(t, err)

	e.makeDue()
	listed.waitAcked(t, 10*time.Second, func(cs []receivedCallback) bool { return len(ackedFor(cs, t1.ID)) == 1 })
	e.recv.waitAcked(t, 10*time.Second, func(cs []receivedCallback) bool { return len(ackedFor(cs, t2.ID)) == 1 })
	require.Eventually(t, func() bool {
		return e.count(`SELECT count(*) FROM sandbox.callbacks WHERE transfer_id = $1::uuid AND gave_up_at IS NOT NULL
			AND last_error LIKE '%allowlist%'`, stale.ID) == 1
	}, 10*time.Second, 20*time.Millisecond)
	attempts, _ := rogue.snapshot()
	require.Empty(t, attempts, "the bank never calls a URL off its list")
	e.checkBooks()
}

func TestHardening9_AllowlistConfiguration(t *testing.T) {
	t.Parallel()
	c := Config{CallbackSecret: "s", CallbackURL: "http://api:8080/cb"}.Defaults()
	require.Equal(t, []string{"http://api:8080/cb"}, c.CallbackAllowlist, "default: the callback URL alone")
	list := []string{"http://other:9000/cb"}
	c = Config{CallbackSecret: "s", CallbackURL: "http://api:8080/cb", CallbackAllowlist: list}.Defaults()
	require.Equal(t, []string{"http://other:9000/cb", "http://api:8080/cb"}, c.CallbackAllowlist, "the callback URL is always on it")
	require.Equal(t, []string{"http://other:9000/cb"}, list, "the caller's slice is not written to")
	for _, bad := range []string{"not a url", "ftp://x/cb", "http://u:p@x/cb", "http://x/cb#f", "http://x/c b", "http://x/\x00", "http://x/" + strings.Repeat("a", 300)} {
		_, err := New(nil, Config{CallbackSecret: "s", CallbackAllowlist: []string{bad}}, nil)
		require.ErrorContains(t, err, "allowlist", "%q", bad)
	}
}

// TestHardening10_FundingAClosedAccountIsRefused: 422 ACCOUNT_CLOSED, nothing booked.
func TestHardening10_FundingAClosedAccountIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("FC-1", "Closing", 500)
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/accounts/FC-1/fund", FundRequest{AmountSantim: 100}).Status)
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/accounts/FC-1/close", nil).Status)
	r := e.do("POST", "/api/v1/sandbox/accounts/FC-1/fund", FundRequest{AmountSantim: 100, Reference: "late-deposit"})
	require.Equal(t, 422, r.Status, "%s", r.Body)
	require.Equal(t, CodeAccountClosed, r.errCode())
	require.Equal(t, int64(600), e.balance("FC-1"))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM sandbox.statement_lines WHERE kind = 'FUNDING'`))

	// The account bound: funding up to it is fine, past it is refused.
	require.Equal(t, 201, e.do("POST", "/api/v1/sandbox/accounts", CreateAccountRequest{AccountNumber: "FC-BIG", HolderName: "Big",
		BalanceSantim: money.MaxAccountTotalSantim - 10}).Status)
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/accounts/FC-BIG/fund", FundRequest{AmountSantim: 10}).Status)
	r = e.do("POST", "/api/v1/sandbox/accounts/FC-BIG/fund", FundRequest{AmountSantim: 1})
	require.Equal(t, 422, r.Status, "%s", r.Body)
	require.Equal(t, CodeBalanceLimit, r.errCode())
	require.Equal(t, money.MaxAccountTotalSantim, e.balance("FC-BIG"))
	e.checkBooks()
}

// TestHardening10_ErrorsNeverNameGoTypes: malformed bodies on every body route are answered in
// the contract's words.
func TestHardening10_ErrorsNeverNameGoTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("GT-1", "Holder", 0)
	routes := []struct{ method, path string }{
		{"POST", "/api/v1/transfers"}, {"POST", "/api/v1/transfer-batches"}, {"POST", "/api/v1/sandbox/accounts"},
		{"POST", "/api/v1/sandbox/accounts/GT-1/fund"}, {"PUT", "/api/v1/sandbox/faults"}, {"PUT", "/api/v1/sandbox/faults/GT-1"},
	}
	keys := []string{"reference", "fromAccount", "toAccount", "amountSantim", "currency", "tenantId", "domain", "callbackUrl",
		"batchReference", "items", "accountNumber", "holderName", "balanceSantim", "status", "latencyMs", "errorRatePercent",
		"executeThenTimeoutMs", "rejectCode", "duplicateCallback", "settleFailureCode"}
	values := []string{`"x"`, `1`, `1.5`, `-1e400`, `true`, `[]`, `{}`, `[1]`, `["x"]`, `{"a":1}`, `99999999999999999999`}
	n := 0
	for _, rt := range routes {
		for _, k := range keys {
			for _, v := range values {
				body := `{"` + k + `":` + v + `}`
				r := e.send(t, rt.method, rt.path, []byte(body))
				require.Less(t, r.Status, 500, "%s %s %s: %s", rt.method, rt.path, body, r.Body)
				requireNoGoWords(t, rt.path+" "+body, r.Body)
				n++
				if rt.method == "PUT" && r.Status == 200 {
					// A well-formed fault body was set; clear it before it delays or fails the rest.
					require.Equal(t, 204, e.do("DELETE", "/api/v1/sandbox/faults?all=true", nil).Status)
				}
			}
		}
	}
	t.Logf("%d malformed bodies, none answered with a Go type name", n)

	// The message says what the field must be.
	r := e.send(t, "POST", "/api/v1/transfers", []byte(transferJSON(map[string]string{"amountSantim": `"10"`})))
	require.Equal(t, 400, r.Status)
	require.Contains(t, string(r.Body), "amountSantim must be an integer")
	r = e.send(t, "POST", "/api/v1/transfer-batches", []byte(batchJSON(map[string]string{"items": itemsWith(map[string]string{"amountSantim": `1.5`})})))
	require.Equal(t, 400, r.Status)
	require.Contains(t, string(r.Body), "items.amountSantim must be an integer")
	r = e.send(t, "POST", "/api/v1/transfers", []byte(transferJSON(map[string]string{"fee": `1`})))
	require.Contains(t, string(r.Body), "unknown field fee")
	require.Zero(t, e.count(`SELECT count(*) FROM sandbox.transfers`))
}

// TestHardening1_CreditPastTheAccountBoundFailsAndRefunds: a settlement that would take the
// destination past money.MaxAccountTotalSantim fails that transfer (and refunds its hold), while
// the rest of the round settles; it never stalls the settler on an overflow.
func TestHardening1_CreditPastTheAccountBoundFailsAndRefunds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("OB-SRC", "Source", 2*money.MaxAmountSantim)
	e.openAccount("OB-FULL", "Full", money.MaxAccountTotalSantim-money.MaxAmountSantim+1)
	e.openAccount("OB-OK", "Fine", 0)
	over := e.create(e.transfer("ob-over", "OB-SRC", "OB-FULL", money.MaxAmountSantim))
	fine := e.create(e.transfer("ob-fine", "OB-SRC", "OB-OK", 7))
	e.makeDue()
	failed := e.waitStatus(over.ID, StatusFailed)
	require.Equal(t, CodeBalanceLimit, failed.FailureCode)
	e.waitStatus(fine.ID, StatusSettled)
	require.Equal(t, 2*money.MaxAmountSantim-7, e.balance("OB-SRC"), "the failed hold is refunded")
	require.Equal(t, money.MaxAccountTotalSantim-money.MaxAmountSantim+1, e.balance("OB-FULL"))
	require.Equal(t, int64(7), e.balance("OB-OK"))
	e.checkBooks()
}
