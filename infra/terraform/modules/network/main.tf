# One VPC over two availability zones: a public subnet per
# zone for the load balancer and the NAT gateways, a private subnet per zone
# for every instance (each zone leaves through its own NAT gateway).

locals {
  zones = var.zones
}

resource "aws_vpc" "this" {
  cidr_block           = var.vpc_cidr
  enable_dns_support   = true
  enable_dns_hostnames = true

  tags = {
    Name = var.name_prefix
  }
}

# Nothing may use the default security group: it allows no traffic at all.
resource "aws_default_security_group" "this" {
  vpc_id = aws_vpc.this.id
}

resource "aws_flow_log" "this" {
  vpc_id               = aws_vpc.this.id
  traffic_type         = "ALL"
  log_destination_type = "s3"
  log_destination      = "${var.log_bucket_arn}/vpc-flow-logs/"

  tags = {
    Name = var.name_prefix
  }
}

resource "aws_internet_gateway" "this" {
  vpc_id = aws_vpc.this.id

  tags = {
    Name = var.name_prefix
  }
}

resource "aws_subnet" "public" {
  count = length(local.zones)

  vpc_id            = aws_vpc.this.id
  availability_zone = local.zones[count.index]
  # 10.x.0.0/20 and 10.x.16.0/20; the private /18s start at 10.x.64.0.
  cidr_block = cidrsubnet(var.vpc_cidr, 4, count.index)

  tags = {
    Name = "${var.name_prefix}-public-${local.zones[count.index]}"
    Tier = "public"
  }
}

resource "aws_subnet" "private" {
  count = length(local.zones)

  vpc_id            = aws_vpc.this.id
  availability_zone = local.zones[count.index]
  cidr_block        = cidrsubnet(var.vpc_cidr, 2, count.index + 1)

  tags = {
    Name = "${var.name_prefix}-private-${local.zones[count.index]}"
    Tier = "private"
  }
}

resource "aws_eip" "nat" {
  count = length(local.zones)

  domain = "vpc"

  tags = {
    Name = "${var.name_prefix}-nat-${local.zones[count.index]}"
  }

  depends_on = [aws_internet_gateway.this]
}

resource "aws_nat_gateway" "this" {
  count = length(local.zones)

  allocation_id = aws_eip.nat[count.index].id
  subnet_id     = aws_subnet.public[count.index].id

  tags = {
    Name = "${var.name_prefix}-${local.zones[count.index]}"
  }
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.this.id

  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.this.id
  }

  tags = {
    Name = "${var.name_prefix}-public"
  }
}

resource "aws_route_table_association" "public" {
  count = length(local.zones)

  subnet_id      = aws_subnet.public[count.index].id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table" "private" {
  count = length(local.zones)

  vpc_id = aws_vpc.this.id

  route {
    cidr_block     = "0.0.0.0/0"
    nat_gateway_id = aws_nat_gateway.this[count.index].id
  }

  tags = {
    Name = "${var.name_prefix}-private-${local.zones[count.index]}"
  }
}

resource "aws_route_table_association" "private" {
  count = length(local.zones)

  subnet_id      = aws_subnet.private[count.index].id
  route_table_id = aws_route_table.private[count.index].id
}

# S3 traffic (artifacts, images) stays off the NAT gateways.
resource "aws_vpc_endpoint" "s3" {
  vpc_id            = aws_vpc.this.id
  service_name      = "com.amazonaws.${var.region}.s3"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = aws_route_table.private[*].id

  tags = {
    Name = "${var.name_prefix}-s3"
  }
}
