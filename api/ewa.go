package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/orgs"
)

// ewaRoutes serves early wage access (/api/ewa/*, /api/me/ewa/requests). The disburse route's
// handler is in ewa_disburse.go.
func (s *Server) ewaRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/ewa/settings", Auth: Org, Role: orgs.Admin, Summary: "The organization's EWA settings (funding account, access cap, fees)", Handler: s.getEwaSettings},
		{Method: http.MethodPut, Path: "/api/ewa/settings", Auth: Org, Role: orgs.Admin, Summary: "Set the organization's EWA settings", Handler: s.putEwaSettings},
		{Method: http.MethodGet, Path: "/api/ewa/eligibility", Auth: Org, Role: orgs.Admin, Summary: "How much an employee may draw now", Handler: s.ewaEligibility},
		{Method: http.MethodPost, Path: "/api/ewa/requests", Auth: Org, Role: orgs.Admin, Idem: true, Summary: "Request an advance for an employee", Handler: s.createEwaRequest},
		{Method: http.MethodGet, Path: "/api/ewa/requests", Auth: Org, Role: orgs.Admin, Summary: "The organization's EWA requests (paged, filtered)", Handler: s.listEwaRequests},
		{Method: http.MethodGet, Path: "/api/ewa/requests/:id", Auth: Org, Role: orgs.Admin, Summary: "One EWA request", Handler: s.getEwaRequest},
		{Method: http.MethodPost, Path: "/api/ewa/requests/:id/disburse", Auth: Org, Role: orgs.Admin, Idem: true, Summary: "Disburse a request (gates, ledger, partner transfer)", Handler: s.disburseEwa},
		{Method: http.MethodPost, Path: "/api/ewa/requests/:id/record-repayment", Auth: Org, Role: orgs.Admin, Idem: true, Summary: "Record the repayment of a disbursed request", Handler: s.recordEwaRepayment},
		{Method: http.MethodPost, Path: "/api/ewa/requests/:id/cancel", Auth: Org, Role: orgs.Admin, Summary: "Cancel a request before disbursement", Handler: s.cancelEwaRequest},
		{Method: http.MethodGet, Path: "/api/me/ewa/requests", Auth: Session, Summary: "The caller's own EWA requests", Handler: s.myEwaRequests},
	}
}

// STUBS: the EWA helper replaces these with the handlers.
func (s *Server) getEwaSettings(c *gin.Context)     { c.Status(http.StatusNotImplemented) }
func (s *Server) putEwaSettings(c *gin.Context)     { c.Status(http.StatusNotImplemented) }
func (s *Server) ewaEligibility(c *gin.Context)     { c.Status(http.StatusNotImplemented) }
func (s *Server) createEwaRequest(c *gin.Context)   { c.Status(http.StatusNotImplemented) }
func (s *Server) listEwaRequests(c *gin.Context)    { c.Status(http.StatusNotImplemented) }
func (s *Server) getEwaRequest(c *gin.Context)      { c.Status(http.StatusNotImplemented) }
func (s *Server) recordEwaRepayment(c *gin.Context) { c.Status(http.StatusNotImplemented) }
func (s *Server) cancelEwaRequest(c *gin.Context)   { c.Status(http.StatusNotImplemented) }
func (s *Server) myEwaRequests(c *gin.Context)      { c.Status(http.StatusNotImplemented) }
