import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res, type Type } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from '../auth/auth-context';
import { Caller, RequireScope } from '../auth/auth.decorators';
import { lazyClientGoneSignal } from '../common/http/client-gone';
import { createValidationPipe } from '../common/http/validation';
import { StoresOwnIdempotentResponse } from '../common/idempotency/idempotent-response';
import type { ListResponse } from '../common/pagination';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import { ApiPage, ApiSuccess } from '../common/openapi/api-success';
import { JobEstimateResponse } from './dto/job-estimate.response';
import { JobResponse } from './dto/job.response';
import { ListJobsQuery, SubmitAudioJobDto, SubmitSdr2HdrJobDto, type SubmitJobBase } from './dto/submit-job.dto';
import type { JobEstimate } from './job-estimate';
import { jobLocation, type JobView } from './job-view';
import type { JobApi } from './job.types';
import { JobsService } from './jobs.service';
import type { RequestedOutput } from './output-options';
import { CancelJob } from './usecases/cancel-job/cancel-job.usecase';
import { EstimateJob } from './usecases/estimate-job/estimate-job.usecase';
import { SubmitJob } from './usecases/submit-job/submit-job.usecase';

const TITLES: Record<JobApi, string> = { sdr2hdr: 'an SDR→HDR10 job', audio: 'a speech loudness job' };

/**
 * One controller class per job API, alike but for the API name, its scope, its body type and how its
 * body names the output options (`requested`, typed per API so they stay typed down to the worker).
 */
function jobsController<Body extends SubmitJobBase>(
  api: JobApi,
  bodyType: Type<Body>,
  requested: (body: Body) => RequestedOutput,
) {
  @ApiTags(api)
  @ApiSecurity('api_key')
  @RequireScope(api)
  @Controller(`v1/${api}/jobs`)
  class ApiJobsController {
    constructor(
      readonly jobs: JobsService,
      readonly submitJob: SubmitJob,
      readonly estimateJob: EstimateJob,
      readonly cancelJob: CancelJob,
    ) {}

    @Post()
    @HttpCode(202)
    @StoresOwnIdempotentResponse()
    @ApiBody({ type: bodyType })
    @ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Up to 255 characters; the same key with the same body within 24 h returns the first response again.',
    })
    @ApiOperation({ summary: `Submit ${TITLES[api]} (202 with Location; credits are held until it ends)` })
    @ApiSuccess(202, JobResponse, 'Accepted: the job, queued (its URL in Location)')
    @ApiErrorResponses('auth', 'rate', 'invalid', 'submit')
    async submit(
      @Caller() caller: AuthContext,
      // The body type differs per API, so the pipe is told it explicitly; accepted bodies take its fast path.
      @Body(createValidationPipe(bodyType, { fast: true })) body: Body,
      @Req() request: FastifyRequest,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<JobView> {
      const view = await this.submitJob.execute(caller, {
        ...requested(body),
        inputs: body.inputs,
        metadata: body.metadata ?? {},
        region: body.region,
        requestId: String(request.id),
        idempotency: request.idempotency,
        signal: lazyClientGoneSignal(reply),
      });
      void reply.header('Location', jobLocation(api, view.job_id));
      return view;
    }

    @Post('estimate')
    @HttpCode(200)
    @ApiBody({ type: bodyType })
    @ApiOperation({
      summary: `Estimate ${TITLES[api]}: credits, USD, processing time, and whether a submit would be accepted now`,
      description:
        'The submit body, checked exactly as the submit checks it (shape, plan, each source probed); no job is created and no credits are held. ' +
        'Limits and money (quota, concurrency, spend cap, balance, queue depth) do not fail the request: `accepted` is false and `error` is the error object the submit would get now.',
    })
    @ApiSuccess(200, JobEstimateResponse, 'The estimate, and whether a submit would be accepted now')
    @ApiErrorResponses('auth', 'rate', 'invalid', 'estimate')
    estimate(
      @Caller() caller: AuthContext,
      @Body(createValidationPipe(bodyType, { fast: true })) body: Body,
      @Req() request: FastifyRequest,
    ): Promise<JobEstimate> {
      return this.estimateJob.execute(caller, {
        ...requested(body),
        inputs: body.inputs,
        metadata: body.metadata ?? {},
        region: body.region,
        requestId: String(request.id),
      });
    }

    @Get()
    @ApiOperation({ summary: `List ${api} jobs, newest first (?status=, cursor pagination)` })
    @ApiPage(JobResponse)
    @ApiErrorResponses('auth', 'rate', 'invalid')
    list(@Caller() caller: AuthContext, @Query() query: ListJobsQuery): Promise<ListResponse<JobView>> {
      return this.jobs.list(caller.accountId, api, query);
    }

    @Get(':job_id')
    @ApiOperation({ summary: `Read ${TITLES[api]} (status, progress, items, billing, error)` })
    @ApiSuccess(200, JobResponse, 'The job')
    @ApiErrorResponses('auth', 'rate', 'job_missing')
    get(@Caller() caller: AuthContext, @Param('job_id') jobId: string): Promise<JobView> {
      return this.jobs.get(caller.accountId, jobId, api);
    }

    @Post(':job_id/cancel')
    @HttpCode(200)
    @ApiOperation({
      summary: `Cancel ${TITLES[api]} while queued, or processing within the cancel window (charged only for the items already delivered)`,
    })
    @ApiSuccess(200, JobResponse, 'The job, cancelled')
    @ApiErrorResponses('auth', 'rate', 'job_missing', 'cancel')
    cancel(@Caller() caller: AuthContext, @Param('job_id') jobId: string): Promise<JobView> {
      return this.cancelJob.execute(caller.accountId, api, jobId);
    }
  }
  Object.defineProperty(ApiJobsController, 'name', {
    value: `${api === 'sdr2hdr' ? 'Sdr2Hdr' : 'Audio'}JobsController`,
  });
  return ApiJobsController;
}

export const Sdr2HdrJobsController = jobsController('sdr2hdr', SubmitSdr2HdrJobDto, (body) => ({
  api: 'sdr2hdr',
  output: body.output,
}));
export const AudioJobsController = jobsController('audio', SubmitAudioJobDto, (body) => ({
  api: 'audio',
  output: body.output,
}));
