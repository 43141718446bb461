// Package identity owns who a person is and how they prove it: users, password hashes (argon2id),
// sessions, one-time secrets (e-mail verification, password reset, account set-up, magic links,
// phone OTPs), TOTP two-factor with backup codes, and platform admin profiles.
//
// Identity precedes tenancy, so these tables are platform-wide (schema/migrations/app/0007). Every
// secret a user holds (session token, reset or magic-link token, OTP, backup code) is stored only
// as a hash and compared in constant time; every one-time secret is single use, expiring, and bound
// to the e-mail or phone it was sent to. Organizations, members and roles live in internal/orgs.
//
// This package never writes an HTTP response and never logs a secret: the API maps its errors.
package identity
