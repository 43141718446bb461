package api

// employeeRoutes serves the employee routes (/api/employees/*, the employee-user link, /api/me/profile, the business employee-count).
func (s *Server) employeeRoutes() []Route { return nil }
