module example.com/quotad

go 1.19
