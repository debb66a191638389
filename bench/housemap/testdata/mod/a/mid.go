package a

func mid() int { return low() + cap }

const cap = 3
