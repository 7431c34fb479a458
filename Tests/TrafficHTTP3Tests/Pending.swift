// The HTTP/3 stage's tests arrive with the h3 branch.
