// Package webauthntest is a software passkey authenticator for tests: it answers the options a
// server sends for navigator.credentials.create and navigator.credentials.get the way a browser
// with a platform authenticator would, and returns the JSON the browser's
// PublicKeyCredential.toJSON() produces, so API tests can register a passkey and sign in with it
// without a browser.
//
// It does what a real authenticator does that a server can check (ES256 keys, the rp id hash, the
// flags, the signature counter, the client data) and nothing the server cannot see: there is no
// user to ask, and the origin is whatever the test says, even one the rp id does not fit, so
// tests can make it lie.
package webauthntest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/fxamacker/cbor/v2"
)

// ErrNoCredential is returned (wrapped) by Get when no stored credential answers the request.
var ErrNoCredential = errors.New("webauthntest: no matching credential")

// Authenticator flags (WebAuthn §6.1): user present, user verified, backup eligible and backed
// up (as a synced passkey is), and attested credential data included (on create only).
const (
	flagsGet    = 0x01 | 0x04 | 0x08 | 0x10
	flagsCreate = flagsGet | 0x40
)

// coseES256 is the COSE algorithm identifier of ECDSA P-256 with SHA-256.
const coseES256 = -7

// Authenticator is a software passkey authenticator: one ECDSA P-256 (ES256) key per credential,
// resident (discoverable) credentials, user presence and user verification always given,
// attestation "none". It is safe for concurrent use.
type Authenticator struct {
	origin string
	store  *store // shared with the copies WithOrigin makes
}

type store struct {
	mu    sync.Mutex
	creds []*credential // in order of creation
}

type credential struct {
	id         []byte
	rpID       string
	userHandle []byte
	key        *ecdsa.PrivateKey
	signCount  uint32
}

// New returns an authenticator that answers as a client at origin (e.g. "http://localhost:8080").
func New(origin string) *Authenticator {
	return &Authenticator{origin: origin, store: &store{}}
}

// WithOrigin returns a copy sharing the same credentials that claims another origin (to test
// origin checks).
func (a *Authenticator) WithOrigin(origin string) *Authenticator {
	return &Authenticator{origin: origin, store: a.store}
}

// descriptor is a PublicKeyCredentialDescriptorJSON; only the id matters here.
type descriptor struct {
	ID string `json:"id"`
}

// creationOptions is the part of PublicKeyCredentialCreationOptionsJSON an authenticator uses.
type creationOptions struct {
	RP struct {
		ID string `json:"id"`
	} `json:"rp"`
	User struct {
		ID string `json:"id"`
	} `json:"user"`
	Challenge        string `json:"challenge"`
	PubKeyCredParams []struct {
		Type string `json:"type"`
		Alg  int    `json:"alg"`
	} `json:"pubKeyCredParams"`
	ExcludeCredentials []descriptor `json:"excludeCredentials"`
}

// credentialJSON is PublicKeyCredential.toJSON() around a registration or an authentication
// response. No extension is implemented, so clientExtensionResults is always {}.
type credentialJSON[R any] struct {
	ID                      string   `json:"id"`
	RawID                   string   `json:"rawId"`
	Type                    string   `json:"type"`
	Response                R        `json:"response"`
	ClientExtensionResults  struct{} `json:"clientExtensionResults"`
	AuthenticatorAttachment string   `json:"authenticatorAttachment"`
}

// requestOptions is the part of PublicKeyCredentialRequestOptionsJSON an authenticator uses.
type requestOptions struct {
	Challenge        string       `json:"challenge"`
	RPID             string       `json:"rpId"`
	AllowCredentials []descriptor `json:"allowCredentials"`
}

// Create answers navigator.credentials.create: options is the JSON the server sent — either the
// CredentialCreation wrapper {"publicKey": {...}} or the bare PublicKeyCredentialCreationOptions
// {...}. It makes a new credential for options.rp.id and options.user.id and returns the
// RegistrationResponseJSON. The credential is stored, with a signature counter of 0, for Get.
//
// As a browser does, it refuses options that do not allow ES256 or that exclude a credential it
// already holds for the rp id.
func (a *Authenticator) Create(options []byte) ([]byte, error) {
	var opts creationOptions
	if err := decodeOptions(options, &opts); err != nil {
		return nil, err
	}
	if opts.RP.ID == "" {
		return nil, errors.New("webauthntest: creation options without rp.id")
	}
	challenge, err := decodeB64("challenge", opts.Challenge)
	if err != nil {
		return nil, err
	}
	userHandle, err := decodeB64("user.id", opts.User.ID)
	if err != nil {
		return nil, err
	}
	if !allowsES256(opts) {
		return nil, errors.New("webauthntest: pubKeyCredParams does not allow ES256")
	}
	excluded, err := decodeIDs(opts.ExcludeCredentials)
	if err != nil {
		return nil, err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("webauthntest: %w", err)
	}
	cred := &credential{id: make([]byte, 32), rpID: opts.RP.ID, userHandle: userHandle, key: key}
	_, _ = rand.Read(cred.id) // never fails (crypto/rand)

	coseKey, err := coseKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	spki, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("webauthntest: %w", err)
	}
	// attestedCredentialData: AAGUID (zero: no model to attest) || credential id length || id || key.
	attested := make([]byte, 16, 16+2+len(cred.id)+len(coseKey))
	attested = binary.BigEndian.AppendUint16(attested, uint16(len(cred.id)))
	attested = append(attested, cred.id...)
	attested = append(attested, coseKey...)
	authData := authenticatorData(cred.rpID, flagsCreate, 0, attested)

	attObj, err := ctap2.Marshal(struct {
		Fmt      string         `cbor:"fmt"`
		AttStmt  map[string]any `cbor:"attStmt"`
		AuthData []byte         `cbor:"authData"`
	}{"none", map[string]any{}, authData})
	if err != nil {
		return nil, fmt.Errorf("webauthntest: %w", err)
	}
	clientData, err := clientDataJSON("webauthn.create", challenge, a.origin)
	if err != nil {
		return nil, err
	}

	a.store.mu.Lock()
	for _, c := range a.store.creds {
		if c.rpID == cred.rpID && containsID(excluded, c.id) {
			a.store.mu.Unlock()
			return nil, errors.New("webauthntest: a credential in excludeCredentials is already registered")
		}
	}
	a.store.creds = append(a.store.creds, cred)
	a.store.mu.Unlock()

	type response struct {
		ClientDataJSON     string   `json:"clientDataJSON"`
		AuthenticatorData  string   `json:"authenticatorData"`
		Transports         []string `json:"transports"`
		PublicKey          string   `json:"publicKey"`
		PublicKeyAlgorithm int      `json:"publicKeyAlgorithm"`
		AttestationObject  string   `json:"attestationObject"`
	}
	return json.Marshal(credentialJSON[response]{
		ID:                      b64(cred.id),
		RawID:                   b64(cred.id),
		Type:                    "public-key",
		Response:                response{b64(clientData), b64(authData), []string{"internal"}, b64(spki), coseES256, b64(attObj)},
		AuthenticatorAttachment: "platform",
	})
}

// Get answers navigator.credentials.get: options is {"publicKey": {...}} or the bare
// PublicKeyCredentialRequestOptions. It picks a stored credential for options.rpId — one listed in
// allowCredentials if that is non-empty, else the most recently created one — increments its
// signature counter and returns the AuthenticationResponseJSON. It returns ErrNoCredential when
// no credential fits.
func (a *Authenticator) Get(options []byte) ([]byte, error) {
	var opts requestOptions
	if err := decodeOptions(options, &opts); err != nil {
		return nil, err
	}
	if opts.RPID == "" {
		return nil, errors.New("webauthntest: request options without rpId")
	}
	challenge, err := decodeB64("challenge", opts.Challenge)
	if err != nil {
		return nil, err
	}
	allowed, err := decodeIDs(opts.AllowCredentials)
	if err != nil {
		return nil, err
	}

	// Pick and count under the lock; the key and user handle never change, so signing can go on
	// outside it.
	a.store.mu.Lock()
	var cred *credential
	for i := len(a.store.creds) - 1; i >= 0 && cred == nil; i-- {
		c := a.store.creds[i]
		if c.rpID == opts.RPID && (len(allowed) == 0 || containsID(allowed, c.id)) {
			cred = c
		}
	}
	if cred == nil {
		a.store.mu.Unlock()
		return nil, fmt.Errorf("%w for rp id %q", ErrNoCredential, opts.RPID)
	}
	cred.signCount++
	count := cred.signCount
	a.store.mu.Unlock()

	authData := authenticatorData(cred.rpID, flagsGet, count, nil)
	clientData, err := clientDataJSON("webauthn.get", challenge, a.origin)
	if err != nil {
		return nil, err
	}
	// The signature covers authenticatorData || SHA-256(clientDataJSON) (WebAuthn §6.3.3).
	clientHash := sha256.Sum256(clientData)
	digest := sha256.Sum256(append(bytes.Clone(authData), clientHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, cred.key, digest[:])
	if err != nil {
		return nil, fmt.Errorf("webauthntest: %w", err)
	}

	type response struct {
		ClientDataJSON    string `json:"clientDataJSON"`
		AuthenticatorData string `json:"authenticatorData"`
		Signature         string `json:"signature"`
		UserHandle        string `json:"userHandle"`
	}
	return json.Marshal(credentialJSON[response]{
		ID:                      b64(cred.id),
		RawID:                   b64(cred.id),
		Type:                    "public-key",
		Response:                response{b64(clientData), b64(authData), b64(sig), b64(cred.userHandle)},
		AuthenticatorAttachment: "platform",
	})
}

// CredentialIDs reports the ids (raw bytes) of stored credentials, oldest first.
func (a *Authenticator) CredentialIDs() [][]byte {
	a.store.mu.Lock()
	defer a.store.mu.Unlock()
	ids := make([][]byte, len(a.store.creds))
	for i, c := range a.store.creds {
		ids[i] = bytes.Clone(c.id)
	}
	return ids
}

// SetSignCount forces a credential's stored counter (to simulate a cloned authenticator replaying
// an old counter); the next Get reports n+1. An unknown id is ignored.
func (a *Authenticator) SetSignCount(credentialID []byte, n uint32) {
	a.store.mu.Lock()
	defer a.store.mu.Unlock()
	for _, c := range a.store.creds {
		if bytes.Equal(c.id, credentialID) {
			c.signCount = n
		}
	}
}

// decodeOptions unwraps {"publicKey": {...}} if options is that wrapper and decodes the options
// into v.
func decodeOptions(options []byte, v any) error {
	var wrapper struct {
		PublicKey json.RawMessage `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &wrapper); err != nil {
		return fmt.Errorf("webauthntest: options: %w", err)
	}
	if len(wrapper.PublicKey) > 0 && string(wrapper.PublicKey) != "null" {
		options = wrapper.PublicKey
	}
	if err := json.Unmarshal(options, v); err != nil {
		return fmt.Errorf("webauthntest: options: %w", err)
	}
	return nil
}

// ctap2 encodes CBOR in the CTAP2 canonical form authenticators use (map keys sorted).
var ctap2 = func() cbor.EncMode {
	em, err := cbor.CTAP2EncOptions().EncMode()
	if err != nil {
		panic(err) // the options are constant
	}
	return em
}()

// coseKey encodes an ES256 public key as a COSE_Key (RFC 9053 §7.1.1): kty EC2, alg ES256,
// crv P-256, and the 32-byte x and y coordinates.
func coseKey(pub *ecdsa.PublicKey) ([]byte, error) {
	point, err := pub.Bytes() // 0x04 || x || y
	if err != nil {
		return nil, fmt.Errorf("webauthntest: %w", err)
	}
	key, err := ctap2.Marshal(struct {
		Kty int    `cbor:"1,keyasint"`
		Alg int    `cbor:"3,keyasint"`
		Crv int    `cbor:"-1,keyasint"`
		X   []byte `cbor:"-2,keyasint"`
		Y   []byte `cbor:"-3,keyasint"`
	}{2, coseES256, 1, point[1:33], point[33:65]})
	if err != nil {
		return nil, fmt.Errorf("webauthntest: %w", err)
	}
	return key, nil
}

// authenticatorData lays out WebAuthn §6.1: SHA-256(rp id) || flags || signCount (big-endian) ||
// attestedCredentialData (create only).
func authenticatorData(rpID string, flags byte, signCount uint32, attested []byte) []byte {
	rpHash := sha256.Sum256([]byte(rpID))
	out := make([]byte, 0, 37+len(attested))
	out = append(out, rpHash[:]...)
	out = append(out, flags)
	out = binary.BigEndian.AppendUint32(out, signCount)
	return append(out, attested...)
}

// clientDataJSON is the CollectedClientData a browser hands the authenticator and the server. The
// challenge is the base64url (unpadded) of the options' challenge bytes, which is the string the
// server sent when it sent it unpadded, as servers do.
func clientDataJSON(typ string, challenge []byte, origin string) ([]byte, error) {
	out, err := json.Marshal(struct {
		Type        string `json:"type"`
		Challenge   string `json:"challenge"`
		Origin      string `json:"origin"`
		CrossOrigin bool   `json:"crossOrigin"`
	}{typ, b64(challenge), origin, false})
	if err != nil {
		return nil, fmt.Errorf("webauthntest: %w", err)
	}
	return out, nil
}

// allowsES256 reports whether the server accepts ES256; an empty list means ES256 and RS256
// (WebAuthn §5.4).
func allowsES256(opts creationOptions) bool {
	if len(opts.PubKeyCredParams) == 0 {
		return true
	}
	for _, p := range opts.PubKeyCredParams {
		if p.Type == "public-key" && p.Alg == coseES256 {
			return true
		}
	}
	return false
}

func decodeIDs(ds []descriptor) ([][]byte, error) {
	ids := make([][]byte, 0, len(ds))
	for _, d := range ds {
		id, err := decodeB64("credential id", d.ID)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func containsID(ids [][]byte, id []byte) bool {
	for _, x := range ids {
		if bytes.Equal(x, id) {
			return true
		}
	}
	return false
}

// decodeB64 decodes a non-empty base64url field (padded or not).
func decodeB64(field, s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, fmt.Errorf("webauthntest: %s is not base64url: %w", field, err)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("webauthntest: missing %s", field)
	}
	return b, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
