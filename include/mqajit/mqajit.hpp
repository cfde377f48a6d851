#pragma once

#include "mqajit/error.hpp"
#include "mqajit/export.hpp"
#include "mqajit/mqa_logits.hpp"
#include "mqajit/mqa_topk.hpp"
#include "mqajit/paged_mqa_logits.hpp"
#include "mqajit/status.hpp"
#include "mqajit/tensor.hpp"
#include "mqajit/version.hpp"
