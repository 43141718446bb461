package api

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzPlatformSupportRoutes: whatever reaches the dead-letter, operator, audit-log and user-directory routes (any
// path parameter, query and body, from a platform admin, a business owner or nobody) answers 4xx
// or success, never 5xx.
func FuzzPlatformSupportRoutes(f *testing.F) {
	fx := newAuthFixture(f)
	admin := fx.platformAdmin("fuzz-support-admin@wagerail.test")
	owner, su := fx.signUp("fuzz-support-owner@example.com", "BUSINESS")
	routes := append(append(append(fx.srv.deadLetterRoutes(), fx.srv.operatorRoutes()...), fx.srv.auditLogRoutes()...), fx.srv.adminUserRoutes()...)
	f.Add(uint8(0), uint8(0), "", "consumer=event-log&type=ewa.disbursed.v1&limit=1", "")
	f.Add(uint8(0), uint8(0), "", "from=0000-01-01T00:00:00Z&to=9999-12-31T23:59:59Z&cursor=99999999999999999999", "")
	f.Add(uint8(0), uint8(0), "", "consumer=%00&type=%ff&tenantId=../x", "")
	f.Add(uint8(1), uint8(0), "", "", `{"ids":[1,2,3]}`)
	f.Add(uint8(1), uint8(0), "", "", `{"ids":[9223372036854775807,-1,0]}`)
	f.Add(uint8(1), uint8(0), "", "", `{"ids":[1,1]}`)
	f.Add(uint8(1), uint8(1), "", "", `{"ids":"x"}`)
	f.Add(uint8(2), uint8(0), "", "", "")
	f.Add(uint8(3), uint8(0), "", "", `{"userId":"`+su.User.ID+`"}`)
	f.Add(uint8(3), uint8(0), "", "", `{"userId":"\u0000"}`)
	f.Add(uint8(3), uint8(2), "", "", `{"userId":1e400}`)
	f.Add(uint8(4), uint8(0), su.User.ID, "", "")
	f.Add(uint8(4), uint8(0), "%ff%00", "", "")
	f.Add(uint8(5), uint8(1), "", "actor=system%3Aewa&action=DisburseEwa&outcome=DENIED&limit=100", "")
	f.Add(uint8(5), uint8(1), "", "targetId=%7F&targetType=%E2%80%8B&from=9999-12-31T23:59:59Z", "")
	f.Add(uint8(6), uint8(0), "", "tenantId=*&cursor=9223372036854775807&to=0001-01-01T00:00:00Z", "")
	f.Add(uint8(6), uint8(0), "", "tenantId=%2A&actor="+strings.Repeat("a", 201), "")
	// The user directory (routes 7 to 9): exact and prefix searches, LIKE's wildcards, a user, a
	// sign-out of the owner (the fixture's admin keeps its own session: a sign-out of it would
	// only turn the rest of the run into 401s).
	f.Add(uint8(7), uint8(0), "", "email=%20FUZZ-SUPPORT-OWNER%40example.com%20", "")
	f.Add(uint8(7), uint8(0), "", "emailPrefix=%25%5F%5C&limit=1&cursor=zz", "")
	f.Add(uint8(7), uint8(1), "", "emailPrefix="+strings.Repeat("a", 255), "")
	f.Add(uint8(8), uint8(0), su.User.ID, "", "")
	f.Add(uint8(8), uint8(0), "..%2F..", "", "")
	f.Add(uint8(9), uint8(0), su.User.ID, "", "")
	f.Add(uint8(9), uint8(0), su.User.ID, "", `{"x":1}`)
	f.Fuzz(func(t *testing.T, route, who uint8, param, query, body string) {
		r := routes[int(route)%len(routes)]
		path := r.Path
		if i := strings.IndexByte(path, ':'); i >= 0 {
			rest := ""
			if j := strings.IndexByte(path[i:], '/'); j >= 0 {
				rest = path[i+j:]
			}
			path = path[:i] + param + rest
		}
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.RemoteAddr = "192.0.2.81:40000"
		switch who % 3 {
		case 0:
			req.AddCookie(admin.cookie)
		case 1:
			req.AddCookie(owner.cookie)
		}
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q %q", r.Method, path, query, body))
	})
}
