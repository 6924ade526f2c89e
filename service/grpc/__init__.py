"""The gRPC edge of the referee: servicer, auth, errors, interceptors, and the typed client."""
