package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/freeport"
)

// Redact fails closed: every password position of both DSN forms is masked, and a string it
// cannot take apart with certainty comes back as a placeholder, never as given.
func TestRedactHidesEveryPassword(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]string{
		"":                                      "",
		"postgres://app:s3cret@db:5432/w":       "postgres://app:xxxxx@db:5432/w",
		"postgres://app@db:5432/w":              "postgres://app@db:5432/w",
		"postgresql://db/w?sslmode=verify-full": "postgresql://db/w?sslmode=verify-full",
		"postgres://app@db/w?password=s3cret&sslmode=disable": "postgres://app@db/w?password=xxxxx&sslmode=disable",
		"postgres://app:s3cret@db/w?sslpassword=s3cret":       "postgres://app:xxxxx@db/w?sslpassword=xxxxx",
		"postgres://app@db/w?PassWord=s3cret":                 "postgres://app@db/w?PassWord=xxxxx",
		"host=db user=app password=s3cret dbname=w":           "host=db user=app password=xxxxx dbname=w",
		"host=db user=app password = s3cret dbname=w":         "host=db user=app password=xxxxx dbname=w",
		"host=db password='s3 cret' user=app":                 "host=db password=xxxxx user=app",
		`host=db password='s3\'cret' sslpassword=s3cret`:      "host=db password=xxxxx sslpassword=xxxxx",
		"host=db application_name='my app'":                   "host=db application_name='my app'",
		"postgres://app:s3cret@db:5432/w#s3cret":              "[database url not shown]",
		"postgres://app:s3c%zzret@db/w":                       "[database url not shown]",
		"postgres://app:s3/cret@db/w":                         "[database url not shown]",
		"host=db password='s3cret":                            "[database url not shown]",
		"host=db password=s3'cret":                            "[database url not shown]",
		"s3cret":                                              "[database url not shown]",
		"postgres:s3cret@db/w":                                "[database url not shown]",
		"mysql://app:s3cret@db/w?x=1":                         "[database url not shown]",
		"host=db password='s3cret'user=app":                   "[database url not shown]",
	} {
		got := db.Redact(dsn)
		require.Equal(t, want, got, dsn)
		require.NotContains(t, got, "s3", dsn)
	}
}

// Open's error names the server it could not reach but never the password, whichever form the
// DSN takes and wherever the password sits in it; a DSN that does not parse is not echoed.
func TestOpenErrorNeverCarriesThePassword(t *testing.T) {
	t.Parallel()
	port, err := freeport.One() // claimed, nothing listens: the connection is refused
	require.NoError(t, err)
	p := func(format string) string { return fmt.Sprintf(format, port) }
	var msgs []string
	for _, dsn := range []string{
		p("postgres://wagerail_app:s3cret-userinfo@127.0.0.1:%d/wagerail?sslmode=disable&connect_timeout=2"),
		p("postgres://wagerail_app@127.0.0.1:%d/wagerail?password=s3cret-query&sslmode=disable&connect_timeout=2"),
		p("host=127.0.0.1 port=%d user=wagerail_app password=s3cret-kv dbname=wagerail sslmode=disable connect_timeout=2"),
		p("host=127.0.0.1 port=%d user=wagerail_app password='s3cret quoted' dbname=wagerail sslmode=disable connect_timeout=2"),
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		pool, err := db.Open(ctx, dsn, 1)
		cancel()
		require.Error(t, err, dsn)
		require.Nil(t, pool)
		require.NotContains(t, err.Error(), "s3cret", dsn)
		msgs = append(msgs, err.Error())
	}
	for _, m := range msgs {
		require.Contains(t, m, fmt.Sprintf("wagerail_app@127.0.0.1:%d/wagerail", port), "the error names the server")
	}
	for _, dsn := range []string{"postgres://app:s3cret@db:notaport/w", "host=db password='s3cret", "postgres://app:s3c%zzret@db/w"} {
		_, err := db.Open(context.Background(), dsn, 1)
		require.Error(t, err, dsn)
		require.NotContains(t, err.Error(), "s3c", dsn)
	}
}
