package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// STUB: replaced by the disburse handler (Update-with-Start).
func (s *Server) disburseEwa(c *gin.Context) { c.Status(http.StatusNotImplemented) }
