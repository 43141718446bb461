package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// webhookAdminRoutes serves the platform's view of stored bank callbacks.
func (s *Server) webhookAdminRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/integration/webhooks", Auth: Platform, Summary: "Stored bank callbacks (filtered, paged)", Handler: s.listWebhookEvents},
		{Method: http.MethodGet, Path: "/api/integration/webhooks/:id", Auth: Platform, Summary: "One stored bank callback with its raw body", Handler: s.getWebhookEvent},
		{Method: http.MethodPost, Path: "/api/integration/webhooks/:id/replay", Auth: Platform, Summary: "Re-deliver a stored bank callback to its saga", Handler: s.replayWebhookEvent},
	}
}

// STUBS: the webhook helper replaces these.
func (s *Server) listWebhookEvents(c *gin.Context)  { c.Status(http.StatusNotImplemented) }
func (s *Server) getWebhookEvent(c *gin.Context)    { c.Status(http.StatusNotImplemented) }
func (s *Server) replayWebhookEvent(c *gin.Context) { c.Status(http.StatusNotImplemented) }
