package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Passkeys (WebAuthn, github.com/go-webauthn/webauthn; identity/passkeys.go). A signed-in user
// adds a passkey (the password again first, as for two-factor: a stolen session cookie must not
// plant a lasting way in), lists and removes theirs; anyone signs in with one. The relying party
// is the portal of PUBLIC_URL (passkeyParty). A passkey sign-in requires the authenticator's user
// verification, so it starts a full session without the TOTP step; the organization two-factor
// policy still asks for two-factor on the account.

func (s *Server) passkeyRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/auth/passkey/generate-register-options", Auth: Session,
			Summary: "Begin adding a passkey (the password again; answers the WebAuthn creation options)", Handler: s.passkeyRegisterOptions},
		{Method: http.MethodPost, Path: "/api/auth/passkey/verify-registration", Auth: Session,
			Summary: "Finish adding a passkey with the authenticator's response", Handler: s.passkeyVerifyRegistration},
		{Method: http.MethodPost, Path: "/api/auth/passkey/generate-authenticate-options", Auth: Public,
			Summary: "Begin a passkey sign-in (answers the WebAuthn request options)", Handler: s.passkeyAuthenticateOptions, Body: BodyNone},
		{Method: http.MethodPost, Path: "/api/auth/passkey/verify-authentication", Auth: Public,
			Summary: "Sign in with a passkey: the authenticator's response", Handler: s.passkeyVerifyAuthentication},
		{Method: http.MethodGet, Path: "/api/auth/passkey/list-user-passkeys", Auth: Session, Summary: "The caller's passkeys", Handler: s.listPasskeys},
		{Method: http.MethodPost, Path: "/api/auth/passkey/delete-passkey", Auth: Session, Summary: "Remove one of the caller's passkeys", Handler: s.deletePasskey},
		{Method: http.MethodPost, Path: "/api/auth/passkey/update-passkey", Auth: Session, Summary: "Rename one of the caller's passkeys", Handler: s.renamePasskey},
	}
}

// passkeyParty is the WebAuthn relying party of the portal at publicURL: its host is the RP ID
// and its origin the one origin answers may come from. A portal addressed by an IP address (the
// development default, http://127.0.0.1:8080) cannot have passkeys (browsers refuse IP RP IDs):
// the party is localhost on the same port then, reached at http://localhost:<port>.
func passkeyParty(publicURL string) (*webauthn.WebAuthn, error) {
	u, err := url.Parse(publicURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("passkeys: PUBLIC_URL %q is not an absolute URL", publicURL)
	}
	host := u.Hostname()
	origin := u.Scheme + "://" + u.Host
	if net.ParseIP(host) != nil {
		host = "localhost"
		origin = u.Scheme + "://localhost"
		if p := u.Port(); p != "" {
			origin += ":" + p
		}
	}
	return webauthn.New(&webauthn.Config{RPID: host, RPDisplayName: "Wagerail", RPOrigins: []string{origin},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Enforce: true, Timeout: identity.ChallengeTTL},
			Registration: webauthn.TimeoutConfig{Enforce: true, Timeout: identity.ChallengeTTL}}})
}

var (
	errPasskeyInvalid  = NewError(http.StatusUnauthorized, "PASSKEY_INVALID", "the passkey response was not accepted; begin again")
	errPasskeyNotFound = NewError(http.StatusNotFound, "PASSKEY_NOT_FOUND", "you have no passkey with this id")
)

// passkeyReady answers 503 when no relying party could be made from PUBLIC_URL.
func (s *Server) passkeyReady(c *gin.Context) bool {
	if s.passkeys == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "passkeys need PUBLIC_URL to be the portal's absolute URL"))
		return false
	}
	return true
}

type passkeyJSON struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	BackedUp   bool       `json:"backedUp"`
	Transports []string   `json:"transports"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
}

func toPasskeyJSON(p identity.Passkey) passkeyJSON {
	ts := p.Transports
	if ts == nil {
		ts = []string{}
	}
	return passkeyJSON{ID: p.ID, Name: p.Name, BackedUp: p.BackupState, Transports: ts, CreatedAt: p.CreatedAt, LastUsedAt: p.LastUsedAt}
}

// passkeyRegisterOptions checks the password, then begins a registration: the creation options
// (a discoverable credential with user verification; the user's passkeys excluded) and the
// challenge kept for the user.
func (s *Server) passkeyRegisterOptions(c *gin.Context) {
	if !s.passkeyReady(c) || !s.reauthenticate(c, "PasskeyRegistrationStarted") {
		return
	}
	cl := callerOf(c)
	ctx := c.Request.Context()
	keys, err := identity.PasskeysOf(ctx, s.deps.DB, cl.User.ID)
	if err != nil {
		writeError(c, err)
		return
	}
	if len(keys) >= identity.MaxPasskeys {
		writeError(c, NewError(http.StatusConflict, "PASSKEY_LIMIT_REACHED", fmt.Sprintf("you have %d passkeys, as many as allowed; remove one first", identity.MaxPasskeys)))
		return
	}
	user := identity.WebAuthnUser{User: cl.User, Passkeys: keys}
	exclude := make([]protocol.CredentialDescriptor, len(keys))
	for i, k := range keys {
		exclude[i] = protocol.CredentialDescriptor{Type: protocol.PublicKeyCredentialType, CredentialID: k.CredentialID}
	}
	creation, sd, err := s.passkeys.BeginRegistration(user, webauthn.WithExclusions(exclude),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{ResidentKey: protocol.ResidentKeyRequirementRequired,
			RequireResidentKey: protocol.ResidentKeyRequired(), UserVerification: protocol.VerificationRequired}),
		webauthn.WithConveyancePreference(protocol.PreferNoAttestation))
	if err == nil {
		err = identity.SaveChallenge(ctx, s.deps.DB, identity.CeremonyRegister, cl.User.ID, sd, s.now())
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, creation)
}

// passkeyAnswer is the body of a ceremony's second step: the authenticator's response as the
// browser's PublicKeyCredential.toJSON() gives it.
type passkeyAnswer struct {
	Response json.RawMessage `json:"response"`
}

type passkeyRegistrationRequest struct {
	passkeyAnswer
	Name *string `json:"name"`
}

// bindPasskeyAnswer reads a ceremony's second step into req (whose answer is a): 503 without a
// relying party, 400 for a body that is not one or has no response. It has answered when it
// returns false.
func (s *Server) bindPasskeyAnswer(c *gin.Context, req any, a *passkeyAnswer) bool {
	if !s.passkeyReady(c) {
		return false
	}
	if e := bindJSON(c, req); e != nil {
		writeError(c, e)
		return false
	}
	if e := missingField(required{"response", len(a.Response) > 0 && !bytes.Equal(a.Response, []byte("null"))}); e != nil {
		writeError(c, e)
		return false
	}
	return true
}

// passkeyChallenge is the challenge a WebAuthn response's clientDataJSON answers, read before
// the library parses the whole response (the stored session data it needs is found by it).
func passkeyChallenge(response json.RawMessage) (string, bool) {
	var r struct {
		Response struct {
			ClientDataJSON string `json:"clientDataJSON"`
		} `json:"response"`
	}
	if json.Unmarshal(response, &r) != nil {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(r.Response.ClientDataJSON)
	if err != nil {
		return "", false
	}
	var cd struct {
		Challenge string `json:"challenge"`
	}
	if json.Unmarshal(raw, &cd) != nil || cd.Challenge == "" || len(cd.Challenge) > 256 {
		return "", false
	}
	return cd.Challenge, true
}

// passkeyVerifyRegistration checks the authenticator's response against the user's open
// challenge (used up whatever the outcome) and stores the passkey: 201, audited PasskeyAdded.
// A response that does not verify is 400 PASSKEY_INVALID, audited DENIED, nothing stored.
func (s *Server) passkeyVerifyRegistration(c *gin.Context) {
	var req passkeyRegistrationRequest
	if !s.bindPasskeyAnswer(c, &req, &req.passkeyAnswer) {
		return
	}
	name := "Passkey"
	if req.Name != nil {
		if err := identity.CheckPasskeyName(*req.Name); err != nil {
			writeError(c, fieldError(err))
			return
		}
		name = *req.Name
	}
	cl := callerOf(c)
	ctx := tenancy.WithActor(c.Request.Context(), cl.User.ID)
	now := s.now()
	refuse := func(reason string) {
		if err := s.auditIn(ctx, crosstenant.PlatformTenant, cl.User.ID, audit.Entry{Action: "PasskeyAdded", Outcome: audit.Denied,
			TargetType: "User", TargetID: cl.User.ID, Details: map[string]string{"code": "PASSKEY_INVALID", "reason": reason}}); err != nil {
			writeError(c, err)
			return
		}
		writeError(c, NewError(http.StatusBadRequest, "PASSKEY_INVALID", "the authenticator's response was not accepted: "+reason+"; begin again"))
	}
	challenge, ok := passkeyChallenge(req.Response)
	if !ok {
		refuse("no challenge in clientDataJSON")
		return
	}
	// Used up on its own, so that a refused response cannot be tried again.
	sd, err := identity.TakeChallenge(ctx, s.deps.DB, identity.CeremonyRegister, cl.User.ID, challenge, now)
	var added identity.Passkey
	if err == nil {
		// In the platform's audit scope: the passkey is the user's, no tenant's.
		pctx := tenancy.WithTenant(ctx, crosstenant.PlatformTenant)
		err = tenancy.InTx(pctx, s.deps.DB, func(tx pgx.Tx) error {
			return s.addPasskey(pctx, tx, cl.User, name, sd, req.Response, now, &added)
		})
	}
	switch {
	case errors.Is(err, identity.ErrChallengeInvalid):
		refuse("the challenge is unknown, used or expired")
	case errors.Is(err, errPasskeyParse):
		s.deps.Log.Info("passkey registration refused", "user_id", cl.User.ID, "error", err, "request_id", requestID(c))
		refuse("it did not verify")
	case errors.Is(err, identity.ErrPasskeyExists):
		writeError(c, NewError(http.StatusConflict, "PASSKEY_EXISTS", "this passkey is registered already"))
	case errors.Is(err, identity.ErrTooManyPasskeys):
		writeError(c, NewError(http.StatusConflict, "PASSKEY_LIMIT_REACHED", fmt.Sprintf("you have %d passkeys, as many as allowed; remove one first", identity.MaxPasskeys)))
	case err != nil:
		writeError(c, err)
	default:
		c.JSON(http.StatusCreated, toPasskeyJSON(added))
	}
}

// addPasskey verifies a registration response against its session data sd and stores the
// passkey of user as name (audited PasskeyAdded in ctx's scope, the platform's) into added.
func (s *Server) addPasskey(ctx context.Context, tx pgx.Tx, user identity.User, name string, sd webauthn.SessionData, response json.RawMessage,
	now time.Time, added *identity.Passkey) error {
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return errors.Join(errPasskeyParse, err)
	}
	keys, err := identity.PasskeysOf(ctx, tx, user.ID)
	if err != nil {
		return err
	}
	cred, err := s.passkeys.CreateCredential(identity.WebAuthnUser{User: user, Passkeys: keys}, sd, parsed)
	if err != nil {
		return errors.Join(errPasskeyParse, err)
	}
	if *added, err = identity.AddPasskey(ctx, tx, user.ID, name, cred, now); err != nil {
		return err
	}
	return audit.Write(ctx, tx, audit.Entry{Action: "PasskeyAdded", Outcome: audit.Success,
		TargetType: "Passkey", TargetID: added.ID, Details: map[string]string{"name": name}})
}

// errPasskeyParse marks a response the WebAuthn library refused (malformed or not verifying).
var errPasskeyParse = errors.New("passkey response refused")

// passkeyAuthenticateOptions begins a sign-in: request options for any discoverable credential
// of this party, user verification required; the challenge kept, nobody's yet.
func (s *Server) passkeyAuthenticateOptions(c *gin.Context) {
	if !s.passkeyReady(c) || !s.allow(c, ruleSignInIP, c.ClientIP()) {
		return
	}
	assertion, sd, err := s.passkeys.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err == nil {
		err = identity.SaveChallenge(c.Request.Context(), s.deps.DB, identity.CeremonyLogin, "", sd, s.now())
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, assertion)
}

// passkeyVerifyAuthentication signs in with a passkey: the response's challenge must be an open
// sign-in challenge (used up whatever the outcome), its credential a live passkey whose user the
// response's user handle names, its signature valid with user verification, and its counter
// higher than the last one seen (else a cloned authenticator). Then a full session starts
// (audited SignInPasskey); any refusal is 401 PASSKEY_INVALID, audited DENIED.
func (s *Server) passkeyVerifyAuthentication(c *gin.Context) {
	var req passkeyAnswer
	if !s.bindPasskeyAnswer(c, &req, &req) {
		return
	}
	if !s.allow(c, ruleSignInIP, c.ClientIP()) {
		return
	}
	ctx := c.Request.Context()
	now := s.now()
	var user identity.User
	var key identity.Passkey
	var reason string
	err := pgx.BeginFunc(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var err error
		user, key, reason, err = s.checkPasskeyAssertion(ctx, tx, req.Response, now)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	if reason != "" {
		s.deps.Log.Info("passkey sign-in refused", "reason", reason, "request_id", requestID(c))
		if err := s.auditIn(ctx, crosstenant.PlatformTenant, anonymousActor, audit.Entry{Action: "SignInPasskey", Outcome: audit.Denied,
			TargetType: "User", TargetID: user.ID, Details: map[string]string{"code": errPasskeyInvalid.Code, "reason": reason}}); err != nil {
			writeError(c, err)
			return
		}
		writeError(c, errPasskeyInvalid)
		return
	}
	s.startSessionBy(c, user, true, "SignInPasskey", key.ID)
}

// checkPasskeyAssertion verifies a sign-in response in tx: the user it signs in and by which passkey,
// or why not (reason; the challenge is used up either way and the transaction commits).
func (s *Server) checkPasskeyAssertion(ctx context.Context, tx pgx.Tx, response json.RawMessage, now time.Time) (identity.User, identity.Passkey, string, error) {
	challenge, ok := passkeyChallenge(response)
	if !ok {
		return identity.User{}, identity.Passkey{}, "no challenge in clientDataJSON", nil
	}
	sd, err := identity.TakeChallenge(ctx, tx, identity.CeremonyLogin, "", challenge, now)
	if errors.Is(err, identity.ErrChallengeInvalid) {
		return identity.User{}, identity.Passkey{}, "the challenge is unknown, used or expired", nil
	}
	if err != nil {
		return identity.User{}, identity.Passkey{}, "", err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return identity.User{}, identity.Passkey{}, "malformed response", nil
	}
	var key identity.Passkey
	var dbErr error
	found, cred, err := s.passkeys.ValidatePasskeyLogin(func(rawID, userHandle []byte) (webauthn.User, error) {
		k, err := identity.PasskeyByCredential(ctx, tx, rawID)
		if err != nil {
			if !errors.Is(err, identity.ErrNotFound) {
				dbErr = err
			}
			return nil, err
		}
		if k.UserID != string(userHandle) {
			return nil, errors.New("the user handle is not the passkey's user")
		}
		u, err := identity.UserByID(ctx, tx, k.UserID)
		if err != nil {
			dbErr = err
			return nil, err
		}
		key = k
		return identity.WebAuthnUser{User: u, Passkeys: []identity.Passkey{k}}, nil
	}, sd, parsed)
	switch {
	case dbErr != nil:
		return identity.User{}, identity.Passkey{}, "", dbErr
	case err != nil:
		return identity.User{}, identity.Passkey{}, "it did not verify", nil
	case cred.Authenticator.CloneWarning:
		return found.(identity.WebAuthnUser).User, key, "the authenticator's counter went back (a cloned authenticator)", nil
	}
	user := found.(identity.WebAuthnUser).User
	return user, key, "", identity.UsePasskey(ctx, tx, key.ID, cred.Authenticator.SignCount, cred.Flags.BackupState, now)
}

func (s *Server) listPasskeys(c *gin.Context) {
	keys, err := identity.PasskeysOf(c.Request.Context(), s.deps.DB, callerOf(c).User.ID)
	if err != nil {
		writeError(c, err)
		return
	}
	out := make([]passkeyJSON, len(keys))
	for i, k := range keys {
		out[i] = toPasskeyJSON(k)
	}
	c.JSON(http.StatusOK, gin.H{"items": out})
}

type passkeyIDRequest struct {
	ID string `json:"id"`
}

// deletePasskey removes one of the caller's passkeys and signs out the sessions it signed in but
// the caller's own (audited PasskeyRemoved, with how many); another user's id is 404 as a
// missing one.
func (s *Server) deletePasskey(c *gin.Context) {
	var req passkeyIDRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := field.Identifier("id", req.ID, 64); err != nil {
		writeError(c, fieldError(err))
		return
	}
	s.changePasskey(c, "PasskeyRemoved", func(ctx context.Context, tx pgx.Tx, cl *caller) (identity.Passkey, any, error) {
		gone, revoked, err := identity.DeletePasskey(ctx, tx, cl.User.ID, req.ID, cl.Session.ID, s.now())
		return gone, map[string]int64{"sessionsRevoked": revoked}, err
	})
}

type passkeyRenameRequest struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// renamePasskey renames one of the caller's passkeys (audited PasskeyRenamed); another user's id
// is 404 as a missing one.
func (s *Server) renamePasskey(c *gin.Context) {
	var req passkeyRenameRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	for _, err := range []error{field.Identifier("id", req.ID, 64), identity.CheckPasskeyName(req.Name)} {
		if err != nil {
			writeError(c, fieldError(err))
			return
		}
	}
	s.changePasskey(c, "PasskeyRenamed", func(ctx context.Context, tx pgx.Tx, cl *caller) (identity.Passkey, any, error) {
		p, err := identity.RenamePasskey(ctx, tx, cl.User.ID, req.ID, req.Name)
		return p, nil, err
	})
}

// changePasskey runs change on one of the caller's passkeys in one transaction of the platform's
// audit scope (a passkey is the user's, no tenant's), audits action with change's details and
// answers the passkey; PASSKEY_NOT_FOUND when change finds none of the caller's.
func (s *Server) changePasskey(c *gin.Context, action string, change func(ctx context.Context, tx pgx.Tx, cl *caller) (identity.Passkey, any, error)) {
	cl := callerOf(c)
	ctx := tenancy.WithTenant(tenancy.WithActor(c.Request.Context(), cl.User.ID), crosstenant.PlatformTenant)
	var p identity.Passkey
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var details any
		var err error
		if p, details, err = change(ctx, tx, cl); err != nil {
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: "Passkey", TargetID: p.ID, Details: details})
	})
	switch {
	case errors.Is(err, identity.ErrNotFound):
		writeError(c, errPasskeyNotFound)
	case err != nil:
		writeError(c, err)
	default:
		c.JSON(http.StatusOK, toPasskeyJSON(p))
	}
}
