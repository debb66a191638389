package a

// T is declared here; its method in leafmethod.go.
type T struct{}
