package a

func (T) leaf() int { return 1 }
