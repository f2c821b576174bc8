module example.com/certwatch

go 1.19
