package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/platform/ratelimit"
)

// Rate limits of the routes that guess at secrets (passwords, OTP codes) or send messages (magic
// links, reset e-mails, OTP texts). Per IP they bound one client; per account (e-mail or phone,
// whether or not an account exists, so the limit reveals nothing) they bound a distributed attack
// on one person. The per-account sign-in rule is the brute-force lockout: ten attempts in fifteen
// minutes, cleared by a successful sign-in. Counters live in Postgres, shared by every replica.
var (
	ruleSignInIP       = ratelimit.Rule{Name: "sign-in:ip", Limit: 100, Window: 15 * time.Minute}
	ruleSignInAccount  = ratelimit.Rule{Name: "sign-in:account", Limit: 10, Window: 15 * time.Minute}
	ruleSignUpIP       = ratelimit.Rule{Name: "sign-up:ip", Limit: 20, Window: time.Hour}
	ruleMessageIP      = ratelimit.Rule{Name: "message:ip", Limit: 30, Window: 15 * time.Minute}
	ruleMessageAccount = ratelimit.Rule{Name: "message:account", Limit: 5, Window: 15 * time.Minute}
	ruleOTPVerify      = ratelimit.Rule{Name: "otp-verify:account", Limit: 10, Window: 15 * time.Minute}
	ruleTwoFactorUser  = ratelimit.Rule{Name: "two-factor:user", Limit: 10, Window: 15 * time.Minute}
	// The public demo-request form (api/demo_requests.go) writes a row per valid submission: ten
	// an hour per IP is more than an office behind one address sends, and bounds what a script
	// can add to the platform's inbox and its audit trail.
	ruleDemoRequestIP = ratelimit.Rule{Name: "demo-request:ip", Limit: 10, Window: time.Hour}
	// An employee's own uploads (POST /api/uploads?employeeId=, api/uploads.go) are stored in an
	// organization they are no member of: thirty an hour per user is several KYC submissions'
	// worth (a photo and up to ten documents each) and bounds what one account can add to the
	// employer's storage.
	ruleEmployeeUpload = ratelimit.Rule{Name: "upload:employee", Limit: 30, Window: time.Hour}
)

var allRateLimits = []ratelimit.Rule{ruleSignInIP, ruleSignInAccount, ruleSignUpIP, ruleMessageIP, ruleMessageAccount, ruleOTPVerify,
	ruleTwoFactorUser, ruleDemoRequestIP, ruleEmployeeUpload}

// allow counts one hit of rule for subject; past the limit it answers 429 with Retry-After and
// returns false.
func (s *Server) allow(c *gin.Context, rule ratelimit.Rule, subject string) bool {
	d, err := s.limiter.Allow(c.Request.Context(), rule, subject)
	if err != nil {
		writeError(c, err)
		return false
	}
	if d.Allowed {
		return true
	}
	secs := int((d.RetryAfter + time.Second - 1) / time.Second)
	c.Header("Retry-After", strconv.Itoa(secs))
	e := NewError(http.StatusTooManyRequests, "RATE_LIMITED", "too many attempts; try again in "+strconv.Itoa(secs)+" seconds")
	e.Details = map[string]int{"retryAfterSeconds": secs}
	writeError(c, e)
	return false
}

// resetLimit clears a per-account counter after a success (best effort: a failure only means
// the counter runs out on its own).
func (s *Server) resetLimit(ctx context.Context, rule ratelimit.Rule, subject string) {
	if err := s.limiter.Reset(ctx, rule, subject); err != nil {
		s.deps.Log.Warn("rate limit reset failed", "rule", rule.Name, "error", err)
	}
}
