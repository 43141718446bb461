package api

// kycRoutes serves KYC submissions and review (/api/kyc/*).
func (s *Server) kycRoutes() []Route { return nil }
