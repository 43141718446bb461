// Package api is the HTTP edge: the Gin engine, the route table (one function, mirrored by
// openapi.yaml), the request pipeline (security headers on every response, request id, access
// log, panic recovery, a body limit on every route, each route's body step — media type, no body
// where none is taken, no repeated JSON keys — then authentication, tenant and role guards), the
// http.Server's timeouts, JSON request/response types and the one error envelope. Handlers bind, validate, call
// a domain store or start/signal a workflow, and render. It must not move money itself: money
// moves only inside Temporal workflows.
package api
