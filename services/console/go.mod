module github.com/pcourt/pcourt/services/console

go 1.26.0

require (
	github.com/pcourt/pcourt/api v0.0.0-00010101000000-000000000000
	github.com/pcourt/pcourt/libs v0.0.0
)

replace (
	github.com/pcourt/pcourt/api => ../../api
	github.com/pcourt/pcourt/libs => ../../libs
)
